"""The storage server's request path: the client's arrivals (open loop, closed loop, or a trace's),
receive processing, the NVMe submit (after an RDMA READ of a write's data beyond the in-capsule
size), the CQE's completion processing and the client's response; a saturated reactor's backlog,
taken round-robin over its threads up to the commit horizon.

A request costs three events: its arrival (receive processing is committed at once), the end of
receive processing (the doorbell, :meth:`NvmeDevice.submit`), the CQE post (completion processing
is committed and the client-side latency recorded at once).

A part of :class:`models.server.target.Server` (a base class of it: the methods read the fields
its ``__init__`` sets).
"""

from __future__ import annotations

from models.server.reactor import FabricsCommand, LThread, Reactor

#: the workload's ``network_rtt_us`` is the round trip of a request with this much data; more adds
#: transfer time
NET_BASE_BYTES = 4096


class RequestPath:
    """The request path of a :class:`~models.server.target.Server`: arrivals, submits,
    completions, records, and saturated reactors' backlogs."""

    def _resp_extra(self, op: str, nbytes: int) -> float:
        """Network time of a response's data beyond the calibrated 4 KiB (reads only)."""
        return (nbytes - NET_BASE_BYTES) * self.ns_per_byte if op == "read" and nbytes > NET_BASE_BYTES else 0.0

    def _next_arrival(self) -> None:
        i = self._ai + 1
        if i >= len(self._at):
            batch = next(self._agen, None)
            if batch is None:
                self._at = []
                self.arrivals_done = True
                if self.trace is not None and self.n_done == self.n_offered and self.n_offered:
                    self.drained.succeed()
                return
            if len(batch) == 3:
                self._at, self._ac, self._as = batch
            else:
                self._at, self._ac, self._as, self._aop, self._anb, self._aoff = batch
            i = 0
        self._ai = i
        self.engine.call_at(self._at[i], self._arrive)

    def _arrive(self) -> None:
        i = self._ai
        now = self._at[i]
        th = self.conn_thread[self._ac[i]]
        ssd = self._as[i]
        self._next_arrival()
        req = FabricsCommand()
        req.id = self.n_offered
        self.n_offered += 1
        req.thread = th
        req.ssd = ssd
        req.op = self.op
        req.nbytes = self.bs
        req.offset = self._offset_draw() * self.bs
        req.t_arr = now
        self._admit(req, th, now)

    def _arrive_closed(self, conn: int) -> None:
        """A closed-loop client's command of connection ``conn`` reaches the target."""
        now = self.engine.now
        th = self.conn_thread[conn]
        req = FabricsCommand()
        req.id = self.n_offered
        self.n_offered += 1
        req.thread = th
        req.ssd = self.client.conn_ssd[conn]
        req.op = self.op
        req.nbytes = self.bs
        req.offset = self._offset_draw() * self.bs
        req.t_arr = now
        req.conn = conn
        self._admit(req, th, now)

    def _admit(self, req: FabricsCommand, th, now: float) -> None:
        """A request reached its thread's RX queue: processed at once by its reactor, or queued."""
        th.arrivals += 1
        if self.on_arrival is not None:
            self.on_arrival(th, now)
        r = th.reactor
        if r is None:
            th.pending.append(req)
        elif th.pending or r.free_at - now > self.h_hi:
            th.pending.append(req)
            self._backlog(r, th, now)
        else:
            e = self._commit(r, th, now, r.rx_cycles, "receive")
            self.engine.call_at(e, self._submit, req)

    def _arrive_trace(self) -> None:
        """:meth:`_arrive` with the request's own op and size (trace replay)."""
        i = self._ai
        now = self._at[i]
        th = self.conn_thread[self._ac[i]]
        req = FabricsCommand()
        req.id = self.n_offered
        self.n_offered += 1  # before the next arrival is fetched (the end-of-trace check counts it)
        req.thread = th
        req.ssd = self._as[i]
        req.op = self._aop[i]
        req.nbytes = self._anb[i]
        req.offset = self._aoff[i]
        req.t_arr = now
        self._next_arrival()
        self._admit(req, th, now)

    def _submit(self, req: FabricsCommand) -> None:
        req.t_submit = self.engine.now
        if self.tracer is not None:
            r = req.thread.reactor
            if r is not None:
                self._tr_submit_cpu[req.id] = r.cpu_id
        self.devices[req.ssd].submit(req.thread.qps[req.ssd], req)

    def _submit_pull(self, req: FabricsCommand) -> None:
        """:meth:`_submit` after the data of a write over the in-capsule size has been pulled from the
        client (RDMA READ: a round trip plus the transfer)."""
        if req.op == "write" and req.nbytes > self.in_capsule:
            self.engine.call_at(
                self.engine.now + self.rtt_ns + req.nbytes * self.ns_per_byte, RequestPath._submit, self, req
            )
        else:
            RequestPath._submit(self, req)

    def _on_cqe(self, qp, req: FabricsCommand) -> None:
        qp.cq.clear()
        th = req.thread
        r = th.reactor
        now = self.engine.now
        if r is None:
            th.pending_cq.append(req)
        elif th.pending_cq or r.free_at - now > self.h_hi:
            th.pending_cq.append(req)
            self._backlog(r, th, now)
        else:
            self._complete(r, th, now, req)

    def _complete(self, r: Reactor, th: LThread, now: float, req: FabricsCommand) -> None:
        """Commit a completion's processing; the client gets the response half an RTT after it ends."""
        x = now - req.t_submit
        r.svc = x if r.svc == 0.0 else r.svc + (x - r.svc) * 0.0625
        e = self._commit(r, th, now, r.cq_cycles, "complete")
        self.rec_arr.append(req.t_arr)
        self.rec_done.append(e + self.resp_ns)
        if self.client is not None:
            self.client.response(req.conn, e + self.resp_ns)
        if self.records is not None:
            self._record(req, r, now, e + self.resp_ns)
        if self.tracer is not None:
            self._trace_request(r, req, e)

    def _complete_trace(self, r: Reactor, th: LThread, now: float, req: FabricsCommand) -> None:
        """:meth:`_complete` recording the request's id, op and size; the last completion of the
        trace triggers :attr:`drained`."""
        x = now - req.t_submit
        r.svc = x if r.svc == 0.0 else r.svc + (x - r.svc) * 0.0625
        e = self._commit(r, th, now, r.cq_cycles, "complete")
        if self.tracer is not None:
            self._trace_request(r, req, e)
        nb = req.nbytes
        read = req.op == "read"
        done = e + self.half_rtt + (self._resp_extra("read", nb) if read else 0.0)
        self.rec_arr.append(req.t_arr)
        self.rec_done.append(done)
        if self.records is not None:
            self._record(req, r, now, done)
        self.rec_id.append(req.id)
        self.rec_nb.append(nb)
        self.rec_wr.append(0 if read else 1)
        self.n_done += 1
        if self.arrivals_done and self.n_done == self.n_offered:
            self.drained.succeed()

    def keep_records(self) -> None:
        """Keep every completed request (for ``result.records``), from now on."""
        self.records = []

    def _record(self, req: FabricsCommand, r: Reactor, now: float, done: float) -> None:
        """Keep a completed request: the CPU that processed its completion, when (ns), and when the
        client got the response (ns)."""
        req.cpu = r.cpu_id
        req.t_reaped = now
        req.t_complete = done
        self.records.append(req)

    def _trace_request(self, r: Reactor, req: FabricsCommand, done: float) -> None:
        """Timeline: the request's device service and a flow doorbell -> device -> completion."""
        cpu0 = self._tr_submit_cpu.pop(req.id, r.cpu_id)
        self.tracer.request(req, req.thread.qps[req.ssd], req.t_arr, done, ((cpu0, req.t_submit), (r.cpu_id, done)))

    # ---------------------------------------------------------------- saturated reactors
    def _backlog(self, r: Reactor, th: LThread, now: float) -> None:
        if not th.queued:
            th.queued = True
            r.backlog.append(th)
        if r.refill_ev is None:
            t = r.free_at - self.h_lo
            r.refill_ev = self.engine.call_at(t if t > now else now, self._refill, r)

    def _refill(self, r: Reactor) -> None:
        """A saturated reactor takes waiting items round-robin over its threads: per turn at most
        ``poll_batch`` completions (NVMe poller) then ``poll_batch`` received requests (RDMA
        poller), as a loop iteration does, up to the commit horizon."""
        r.refill_ev = None
        now = self.engine.now
        limit = now + self.h_hi
        bl = r.backlog
        batch = self.batch
        while bl and r.free_at < limit:
            th = bl.popleft()
            if th.reactor is not r:
                th.queued = False
                continue
            self._take_batch(r, th, now, limit, batch)
            if th.pending or th.pending_cq:
                bl.append(th)
            else:
                th.queued = False
        if bl:
            t = r.free_at - self.h_lo
            r.refill_ev = self.engine.call_at(t if t > now else now, self._refill, r)

    def _take_batch(self, r: Reactor, th: LThread, now: float, limit: float, batch: int) -> None:
        cq = th.pending_cq
        k = 0
        while cq and k < batch and r.free_at < limit:
            self._complete(r, th, now, cq.popleft())
            k += 1
        rx = th.pending
        k = 0
        call_at = self.engine.call_at
        while rx and k < batch and r.free_at < limit:
            req = rx.popleft()
            e = self._commit(r, th, now, r.rx_cycles, "receive")
            call_at(e, self._submit, req)
            k += 1
