"""fio's SPDK engine (``ioengine=spdk``): SPDK's fio plugin (SPDK's ``examples/nvme/fio_plugin``), fio's
job loop on SPDK's user-space NVMe driver: polled, with no system call, no interrupt, no kernel
block layer.

**Files.** Each of a job's files is an NVMe transport ID of the plugin, ``trtype=PCIe
traddr=0000.af.00.0 ns=1`` (``.`` in place of ``:`` in the PCI address, since fio splits its
``filename`` list at ``:``): :func:`parse_transport_id`. The run maps the distinct addresses to
the platform's SSDs in the order the jobs name them (:func:`map_devices`); the controllers are
bound to vfio-pci (:mod:`models.os.drivers.vfio`) and no kernel job may use them. A job with no
``filename`` takes the SSD stacksim gives any job without one (threads spread over the SSDs).
IOs go to the files as fio's ``file_service_type`` says (round-robin by default), each file's
offsets over its own device.

**Per thread** (the plugin's spdk_fio_setup): one I/O qpair per file, owned by the thread,
polled (spdk_nvme_ctrlr_alloc_io_qpair), created with ``delay_cmd_submit`` (the plugin sets
``qpopts.delay_cmd_submit = true``): a queued command's SQ tail doorbell is written by the next
spdk_nvme_qpair_process_completions on its qpair, not by the submission.

**queue()** (spdk_fio_queue, for each IO after fio's own work ``user_io_cycles``):
spdk_nvme_ns_cmd_read / write builds the command in the qpair's SQ, ``spdk_submit_cycles``. fio's
``slat`` ends when it returns.

**getevents(min, max)** (spdk_fio_getevents; fio's ``iodepth_batch_complete_min`` / ``max`` as
:class:`~models.ioengines.async_io.AsyncThread` reaps them): from the qpair after the one the last
call stopped at, spdk_nvme_qpair_process_completions(qpair, max - taken) on each in turn: take the
posted completions (at most ``max - taken``, each ``spdk_complete_cycles``), write the CQ head
doorbell once if it took any (``mmio_write_cycles``), then a pending SQ tail doorbell (another); a
qpair with nothing posted costs its phase-bit check (``spdk_qpair_poll_cycles``). The call returns
as soon as ``min`` are taken; until then it goes round, and the CPU spins (user time, 100% busy):
no sleep, no context switch, no interrupt. fio then handles each event (``user_complete_cycles``)
and stamps its completion. All of it is user-space work: the plugin's NVMe code is charged to the
``driver`` layer, fio's to ``user``, the spinning to ``polling``, and all of it is the thread's
``usr_cpu``.

Simplifications: a pass over the qpairs takes what the controllers had posted by its start; its SQ
doorbells reach their controllers together, when the first one's store leaves the core; the spin
notices a completion at the end of the pass under way, then takes it in one more pass.
"""

from __future__ import annotations

import re
from typing import Any

from models.ioengines.async_io import AsyncThread
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.os.costs.bundle import Cost
from models.os.drivers.vfio import UserQueuePair
from models.os.fs.filesystem import FileRegion
from simcore.errors import ConfigError

#: the plugin's qpair entries: SPDK's default I/O queue size (DEFAULT_IO_QUEUE_SIZE, 256 entries)
QUEUE_ENTRIES = 256
#: the keys spdk_nvme_transport_id_parse knows (``ns`` is the plugin's, which it skips)
TRID_KEYS = ("trtype", "adrfam", "traddr", "trsvcid", "subnqn", "priority", "hostaddr", "hostsvcid", "ns")
#: a PCI address's hex fields and separators, as spdk_pci_addr_parse's sscanf formats read them
_HEX = re.compile(r"^[0-9a-fA-F]{1,8}$")
_BDF = re.compile(r"^(?:([0-9a-fA-F]{1,8})[.:])?([0-9a-fA-F]{1,2})[.:]([0-9a-fA-F]{1,2})(?:\.([0-9a-fA-F]))?$")


def parse_transport_id(entry: str) -> tuple[str, int | None]:
    """One file of an SPDK job, ``trtype=PCIe traddr=0000.af.00.0 ns=1`` -> (PCI address as
    ``0000:af:00.0``, namespace id or None when ``ns`` is not given: the job then uses ``ssd.nsid``,
    1 by default, as the plugin takes it). ``trtype`` defaults to PCIe; keys are case-insensitive
    (spdk_nvme_transport_id_parse). Other transports (RDMA, TCP: NVMe over Fabrics) are not
    modelled; whether the namespace exists is checked against the SSD (models.ssd.namespaces)."""
    fields: dict[str, str] = {}
    for pair in entry.split():
        key, sep, val = pair.partition("=")
        if not sep or not key or not val:
            raise ConfigError(
                f"ioengine=spdk: file '{entry}': '{pair}' is not KEY=VALUE (expected e.g. "
                "'trtype=PCIe traddr=0000.af.00.0 ns=1')"
            )
        k = key.lower()
        if k not in TRID_KEYS:
            raise ConfigError(
                f"ioengine=spdk: file '{entry}': unknown transport ID key '{key}' (known: {', '.join(TRID_KEYS)})"
            )
        fields[k] = val
    trtype = fields.get("trtype", "PCIe")
    if trtype.lower() != "pcie":
        raise ConfigError(
            f"ioengine=spdk: file '{entry}': trtype={trtype} (NVMe over Fabrics) is not modelled; "
            "the SPDK engine drives local PCIe controllers (trtype=PCIe)"
        )
    if "traddr" not in fields:
        raise ConfigError(
            f"ioengine=spdk: file '{entry}': no traddr= (the controller's PCI address, e.g. 0000.af.00.0)"
        )
    addr = _pci_address(fields["traddr"], entry)
    ns_text = fields.get("ns")
    if ns_text is None:
        return addr, None
    if not ns_text.isdigit() or int(ns_text) < 1:
        raise ConfigError(f"ioengine=spdk: file '{entry}': ns={ns_text} is not a namespace id (1, 2, ...)")
    return addr, int(ns_text)


def _pci_address(text: str, entry: str) -> str:
    """spdk_pci_addr_parse: ``DDDD.BB.DD.F`` or ``DDDD:BB:DD.F``, ``DDDD:BB:DD`` (function 0),
    ``BB.DD.F`` or ``BB:DD.F`` (domain 0), ``BB.DD`` or ``BB:DD`` -> ``dddd:bb:dd.f``; bus <= 0xff,
    device <= 0x1f, function <= 7."""
    parts = re.split(r"[.:]", text)
    seps = "".join(c for c in text if c in ".:")
    if not all(_HEX.match(p) for p in parts) or not 2 <= len(parts) <= 4:
        raise ConfigError(f"ioengine=spdk: file '{entry}': traddr={text} is not a PCI address (e.g. 0000.af.00.0)")
    vals = [int(p, 16) for p in parts]
    if len(vals) == 4:
        dom, bus, dev, fn = vals
    elif len(vals) == 3 and seps == "::":
        (dom, bus, dev), fn = vals, 0
    elif len(vals) == 3:
        dom, (bus, dev, fn) = 0, vals
    else:
        dom, (bus, dev), fn = 0, vals, 0
    if bus > 0xFF or dev > 0x1F or fn > 7:
        raise ConfigError(
            f"ioengine=spdk: file '{entry}': traddr={text} is out of range (bus <= ff, device <= 1f, function <= 7)"
        )
    return f"{dom:04x}:{bus:02x}:{dev:02x}.{fn:x}"


def map_devices(jobs, n_ssds: int) -> dict[str, int]:
    """The SSD of each controller the SPDK jobs name: distinct PCI addresses in the order the jobs
    name them -> 0, 1, ...; a ConfigError naming the job when the platform has fewer SSDs."""
    out: dict[str, int] = {}
    for job in jobs:
        if job.ioengine != "spdk":
            continue
        for entry in job.filename:
            addr, _ns = parse_transport_id(entry)
            if addr not in out:
                if len(out) >= n_ssds:
                    raise ConfigError(
                        f"job '{job.name}': ioengine=spdk names controller {addr}, one more than the "
                        f"platform's {n_ssds} SSD(s) (set ssd_count)"
                    )
                out[addr] = len(out)
    return out


class SpdkThread(AsyncThread):
    """One fio thread of an ``ioengine=spdk`` job: fio's queueing and reaping loop
    (:class:`AsyncThread`) on the thread's own polled qpairs."""

    def __init__(
        self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream
    ) -> None:
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self._sync_trims = False  # a trim is queued like a read (a Dataset Management command)
        self._owner = f"job '{job.name}'"
        self._qpairs: list[UserQueuePair] = []  # one per file, in file order (the plugin's qpair list)
        self._io_files: list[int] = []  # the file of each IO being prepared
        self._next_qp = 0  # where the next getevents starts: after the qpair the last one stopped at
        self._call_started = False  # a getevents call is under way (its set-up paid)
        #: the pass just computed: (first of its call, qpairs checked, doorbells, completions taken)
        self._shape: tuple = ()
        self._arrived = 0  # completions posted on the thread's qpairs while it waits
        self.mmio_writes = 0  # doorbell writes (SQ tail and CQ head)

    def open_devices(self, devs: list[int], service, clone: int, extents: list | None = None) -> None:
        """spdk_fio_setup: the thread's files, one per device index of ``devs`` (in order), each with
        its own qpair on its bound controller; ``service`` picks the file of each IO. ``extents``:
        each file's namespace as (base, size) in its controller's space (None: namespace 1, the
        whole device)."""
        vfio = self.host.user_devices
        for d in devs:
            vfio.bind(d, self._owner)
        ext = extents or [None] * len(devs)
        regions = [
            FileRegion(f"ssd{d}", d, 0, None, False) if e is None else FileRegion(f"ssd{d}", d, e[0], e[1], False)
            for d, e in zip(devs, ext)
        ]
        self.use_files(regions, service, clone)
        self._qpairs = [vfio.alloc_io_qpair(d, QUEUE_ENTRIES, self._cqe_posted, self._owner) for d in devs]

    # -- queue() -----------------------------------------------------------------------------
    def _next_io(self, op: str | None = None) -> tuple[str, int, int]:
        io = super()._next_io(op)
        self._io_files.append(self.files.cur if self._multi_files else 0)
        return io

    def _commit(self, ios: list) -> None:
        """fio's work and the plugin's queue() for each IO in turn: the command in its qpair's SQ,
        its doorbell left for the next completion processing of that qpair."""
        files, self._io_files = self._io_files, []
        runner = self.runner
        k = self.k
        f = runner.freq
        t = runner.clock()
        fio_ns = k.user_io_cycles / f
        per_io_ns = fio_ns + k.spdk_submit_cycles / f
        qps = self._qpairs
        for i, req in enumerate(ios):
            req.qp = None  # not the kernel's: the thread's own qpair
            req.t_submit = t + i * per_io_ns + fio_ns  # fio's start_time, before queue()
            req.t_issued = t + (i + 1) * per_io_ns  # queue() returned
            qps[files[i]].pending.append(req)
        n = len(ios)
        cost = self._acosts.get(("spdk_queue", n))
        if cost is None:
            cost = self._acosts[("spdk_queue", n)] = self.host.costs.get(
                "spdk_queue", user_space=True, user=n * k.user_io_cycles, driver=n * k.spdk_submit_cycles
            )
        runner.run(cost, self._after_submit)

    # -- getevents() -------------------------------------------------------------------------
    def _reap(self) -> None:
        if self._exit_if_drained():
            return
        if self._need() == 0:
            self._fill()
            return
        self._call_started = False
        self._pass()

    def _pass(self) -> None:
        """One round of the getevents loop over the thread's qpairs, from where it stands: doorbells
        written, posted completions taken, until the call has its minimum."""
        need = self._need()
        room = max(self.cmax, need)
        qps = self._qpairs
        nq = len(qps)
        i = self._next_qp
        now = self.host.engine.now
        checks = sq_db = cq_db = 0
        ring = self.ring
        had = len(ring)
        done = False
        doorbells: list[UserQueuePair] = []
        k = self.k
        # the first SQ doorbell reaches the controller when its store leaves the core: after the
        # call's set-up and the work before it in the pass (the pass's others follow it closely)
        at = 0.0 if self._call_started else k.spdk_getevents_cycles
        for _ in range(nq):
            qp = qps[i]
            checks += 1
            cq = qp.hw.cq
            if cq:  # the completions first, then the CQ head doorbell
                left = room - len(ring)
                take = cq[:left]
                del cq[:left]
                for req in take:
                    req.done = True
                    req.t_reaped = now
                ring.extend(take)
                self.visible += len(take)  # in fio's hands at once: no kernel ring between
                self.inflight -= len(take)
                cq_db += 1
            if qp.pending:  # then a delayed SQ tail doorbell (nvme_pcie_qpair_process_completions' end)
                if not doorbells:
                    at += (
                        checks * k.spdk_qpair_poll_cycles
                        + (len(ring) - had) * k.spdk_complete_cycles
                        + (cq_db + 1) * k.mmio_write_cycles
                    )
                doorbells.append(qp)
                sq_db += 1
            i = (i + 1) % nq
            if len(ring) >= need:
                done = True
                break
        self._next_qp = i
        if doorbells:
            self.host.engine.call_at(now + at / self.runner.freq, self._ring, doorbells)
        self.mmio_writes += sq_db + cq_db
        self._shape = (not self._call_started, checks, sq_db + cq_db, len(ring) - had)
        self._call_started = True
        if done:
            self._take(syscall=False)  # fio's events: the pass's cost is the reap's (_reap_cost)
            return
        w = self.wait
        w.need = need - len(ring)
        w.done = False
        self._arrived = 0
        self.runner.run(self._pass_cost(0), self._spin)

    def _ring(self, qps: list[UserQueuePair]) -> None:
        """The SQ tail doorbells of a pass reach their controllers: the pending commands are fetched."""
        now = self.host.engine.now
        for qp in qps:
            for req in qp.pending:
                req.t_dispatch = now
            qp.ring_sq_doorbell()

    def _spin(self) -> None:
        """Nothing more posted: go round the qpairs (each pass one phase-bit check per qpair) until a
        completion is posted, then take it."""
        self.runner.spin(self.wait, self._pass, len(self._qpairs) * self.k.spdk_qpair_poll_cycles)

    def _cqe_posted(self, hw, req) -> None:
        """The controller posted a completion on one of the thread's qpairs (the poll will find it)."""
        w = self.wait
        if not w.done:
            self._arrived += 1
            if self._arrived >= w.need:
                w.done = True
                self.runner.spin_notify(w)

    def _pass_cost(self, n: int) -> Cost:
        """A pass of the getevents loop (``_shape``), with fio's handling of the call's ``n`` events
        when it ends the call."""
        key = ("spdk_pass", n, *self._shape)
        cost = self._acosts.get(key)
        if cost is None:
            first, checks, mmio, taken = self._shape
            k = self.k
            driver = (
                (k.spdk_getevents_cycles if first else 0.0)
                + checks * k.spdk_qpair_poll_cycles
                + mmio * k.mmio_write_cycles
                + taken * k.spdk_complete_cycles
            )
            name = "spdk_getevents" if n else "spdk_poll_pass"
            cost = self._acosts[key] = self.host.costs.get(
                name, user_space=True, user=n * k.user_complete_cycles, driver=driver
            )
        return cost

    def _reap_cost(self, n: int, syscall: bool, flushes: int = 0, pi_cycles: float = 0.0) -> Any:
        """The getevents call's last pass and fio's handling of its ``n`` events (no system call, no
        kernel CQ to flush)."""
        return self._pass_cost(n)
