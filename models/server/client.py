"""A closed-loop NVMe-oF client: fio with the NVMe-oF initiator, as the polling-server studies ran it.

- ``connections`` queue pairs (one per fio job), each assigned to one target thread (poll group)
  at connect time, round-robin in connection order (SPDK's nvmf poll-group assignment), and kept;
- each keeps ``iodepth`` commands outstanding: a new command is sent when a response arrives,
  after ``think_ns`` (fio's thinktime), so a slower target lowers the achieved IOPS instead of
  building an unbounded queue;
- an optional rate cap per phase (fio's ``rate_iops`` over all jobs, split evenly): a connection
  sends at most one command per ``connections / rate`` ns, evenly spaced (fio's linear rate
  process), and never more than ``iodepth`` outstanding; the connections' schedules start staggered
  evenly over one spacing (fio starts its jobs one after another);
- every connection targets one SSD (connection ``c`` -> ``ssds[c mod len(ssds)]``);
- a command reaches the target half a network round trip after the client sends it, and the
  response the client half a round trip (plus data) after the target posts it (the server model's
  ``half_rtt`` and response time).

Times in ns. Nothing is sent at or after ``end_ns``.
"""

from __future__ import annotations

from bisect import bisect_right


class ClosedLoopClient:
    """The client's connections: :meth:`start` sends every connection's first ``iodepth``
    commands; :meth:`response` (called by the target when it posts a response) sends the next."""

    def __init__(
        self,
        engine,
        arrive,
        *,
        connections: int,
        iodepth: int,
        think_ns: float,
        half_rtt_ns: float,
        phases: list[tuple[float, float, float | None]],
        end_ns: float,
        ssds: tuple[int, ...],
    ):
        """``arrive(conn)`` is the target's receive path, called at each command's arrival;
        ``phases``: (start ns, end ns, rate cap IOPS or None)."""
        self.engine = engine
        self.arrive = arrive
        self.connections = connections
        self.iodepth = iodepth
        self.think_ns = think_ns
        self.half_rtt_ns = half_rtt_ns
        self.phases = phases
        self._starts = [p[0] for p in phases]
        self.end_ns = end_ns
        self.conn_ssd = [ssds[c % len(ssds)] for c in range(connections)]
        self.next_slot = [0.0] * connections  # earliest next send of each connection (rate cap)
        self.sent = 0
        self.outstanding = 0

    def start(self) -> None:
        """Every connection sends its first ``iodepth`` commands. Under a rate cap the connections'
        schedules are staggered evenly over one spacing (as jobs started one after another), not
        aligned: aligned schedules would send every connection's command at the same instants."""
        gap = self._cap_gap_ns(0.0)
        for c in range(self.connections):
            self.next_slot[c] = c * gap / self.connections
        for _ in range(self.iodepth):
            for c in range(self.connections):
                self._send(c, 0.0)

    def response(self, conn: int, t_client: float) -> None:
        """The response of a command of ``conn`` reaches the client at ``t_client`` (ns)."""
        self.outstanding -= 1
        self._send(conn, t_client + self.think_ns)

    def _phase(self, t: float) -> int:
        return bisect_right(self._starts, t) - 1

    def _cap_gap_ns(self, t: float) -> float:
        """Per-connection spacing of the rate cap in force at ``t`` (0: no cap)."""
        i = self._phase(t)
        if i < 0:
            return 0.0
        rate = self.phases[i][2]
        return self.connections * 1e9 / rate if rate else 0.0

    def _send(self, conn: int, t: float) -> None:
        slot = self.next_slot[conn]
        if slot > t:
            # held back by the cap; a command held past the end of its phase goes when the next
            # phase starts (the rate changes there, for the commands already waiting too)
            i = self._phase(t)
            phase_end = self.phases[i][1] if i >= 0 else slot
            t = slot if slot <= phase_end else max(t, phase_end)
        if t >= self.end_ns:
            return
        gap = self._cap_gap_ns(t)
        if gap:
            self.next_slot[conn] = t + gap
        self.sent += 1
        self.outstanding += 1
        self.engine.call_at(t + self.half_rtt_ns, self.arrive, conn)
