"""How Linux's NVMe driver spreads a device's IO queues and their interrupt vectors over the CPUs.

- How many queues (``nvme_setup_io_queues``, drivers/nvme/host/pci.c): the driver asks for one
  queue per possible CPU plus its poll queues, the controller grants at most what it offers
  (Set Features, Number of Queues: ``DeviceConfig.max_queue_pairs``); poll queues are served
  first, leaving at least one interrupt-driven queue (``poll_queues = min(poll, nr_io_queues - 1)``).
- Which CPUs each queue serves: the interrupt queues' vectors get managed affinity masks from
  ``irq_create_affinity_masks`` -> ``group_cpus_evenly`` (lib/group_cpus.c; kernel/irq/affinity.c
  before 6.3), and ``blk_mq_pci_map_queues`` maps every CPU of a vector's mask to that vector's
  queue; poll queues (no vector) are spread by ``blk_mq_map_queues``, which calls
  ``group_cpus_evenly`` too since 6.2. ``group_cpus_evenly`` shares the groups among the NUMA
  nodes in proportion to their CPUs (``alloc_nodes_groups``: nodes in ascending CPU count, each
  ``max(1, groups_left * ncpus / cpus_left)``; with fewer groups than nodes, whole nodes are
  dealt round-robin to the groups), then cuts each node's CPUs into that many groups, the first
  ``ncpus % groups`` one CPU larger, an SMT sibling kept with its CPU (``grp_spread_init_one``).
  So a device with fewer queues than CPUs has queues *shared* by several CPUs of one node.
- Where a shared vector fires: a managed vector is activated on the CPU of its mask that has the
  fewest managed vectors so far (x86 ``assign_managed_vector`` -> ``irq_matrix_alloc_managed``:
  ``matrix_find_best_cpu_managed``), so the queues of several devices spread their interrupts
  over the CPUs of a shared mask [recalled from arch/x86/kernel/apic/vector.c and
  kernel/irq/matrix.c, not re-read].
"""

from __future__ import annotations

from typing import Sequence


def queue_counts(ncpu: int, poll: int, max_queue_pairs: int) -> tuple[int, int]:
    """(interrupt-driven queues, poll queues) of one device: ``ncpu`` wanted interrupt queues and
    ``poll`` wanted poll queues, at most ``max_queue_pairs`` in all, poll queues served first but
    never the last queue (nvme_setup_io_queues)."""
    total = min(ncpu + poll, max_queue_pairs)
    npoll = min(poll, total - 1)
    return total - npoll, npoll


def _node_groups(numgrps: int, node_ncpus: Sequence[int]) -> list[int]:
    """Groups per node (alloc_nodes_groups), for ``numgrps`` >= the nodes with CPUs."""
    out = [0] * len(node_ncpus)
    order = sorted((n for n in range(len(node_ncpus)) if node_ncpus[n]), key=lambda n: (node_ncpus[n], n))
    left = sum(node_ncpus)
    for n in order:
        ncpus = node_ncpus[n]
        g = max(1, numgrps * ncpus // left)
        out[n] = g
        left -= ncpus
        numgrps -= g
    return out


def group_cpus_evenly(numgrps: int, nodes: Sequence[Sequence[int]], sibling_of: Sequence[int]) -> list[tuple[int, ...]]:
    """``numgrps`` CPU groups (each a sorted tuple of CPU ids) covering every CPU of ``nodes``
    (each node's CPUs), as lib/group_cpus.c makes them; ``sibling_of[c]`` is CPU ``c``'s SMT
    sibling (``c`` itself without SMT). Groups are numbered node by node, in node order."""
    live = [list(cpus) for cpus in nodes if cpus]
    if numgrps <= len(live):  # fewer groups than nodes: whole nodes dealt round-robin
        groups: list[list[int]] = [[] for _ in range(numgrps)]
        for i, cpus in enumerate(live):
            groups[i % numgrps].extend(cpus)
        return [tuple(sorted(g)) for g in groups]
    out: list[tuple[int, ...]] = []
    for cpus, ngroups in zip(live, _node_groups(numgrps, [len(c) for c in live])):
        left = sorted(cpus)
        per, extra = divmod(len(left), ngroups)
        for g in range(ngroups):
            want = per + (1 if g < extra else 0)
            grp: list[int] = []
            while len(grp) < want and left:
                cpu = left.pop(0)
                grp.append(cpu)
                sib = sibling_of[cpu]
                if sib != cpu and sib in left and len(grp) < want:
                    left.remove(sib)
                    grp.append(sib)
            out.append(tuple(sorted(grp)))
    return out


class VectorMatrix:
    """The managed-vector counts of the CPUs (x86's vector matrix): a vector with a mask of several
    CPUs fires on the one of them with the fewest managed vectors so far (ties: the lowest id)."""

    def __init__(self, ncpu: int):
        self.allocated = [0] * ncpu

    def assign(self, mask: Sequence[int]) -> int:
        """The CPU a new managed vector of affinity ``mask`` is activated on."""
        cpu = min(mask, key=lambda c: (self.allocated[c], c))
        self.allocated[cpu] += 1
        return cpu
