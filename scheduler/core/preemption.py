"""The preemption seam (scheduling.md 5.3, 7, 8).

Flavor assignment asks, for one FR that lacks unused quota, which admitted
workloads could be evicted to make room.  Classical and fair-sharing
preemption are the next issue; until then nobody may be preempted, so every
"needs preemption" outcome is "Preempt, no candidates".
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.resources import FlavorResource


@dataclass(frozen=True, slots=True)
class Target:
    """A workload to evict, and why (``InClusterQueue``, ``InCohortReclamation``, ...)."""

    workload: str
    cluster_queue: str
    reason: str


def find_targets(
    *, cluster_queue: ClusterQueueInfo, fr: FlavorResource, amount: int, priority: int
) -> tuple[Target, ...]:
    """Workloads whose eviction would let ``amount`` of ``fr`` fit in ``cluster_queue``: pure.

    No preemption yet: always empty.
    """
    return ()


__all__ = ["Target", "find_targets"]
