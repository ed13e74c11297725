"""What a victim search reads and returns: the preemptor, the state it searches, the targets.

Kept apart from the search itself so that ``candidates``, ``classical`` and
``fair`` can all import these types without importing the package that
imports them (no import circle, no ``TYPE_CHECKING``).  The fair-sharing
strategy names live here for the same reason: the context's default needs
them and ``fair`` implements them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.state import WorkloadRecord

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
DEFAULT_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)
"""Fair-sharing preemption strategies when the Configuration names none.

See docs/scheduling.md#preemption-under-fair-sharing.
"""


@dataclass(frozen=True, slots=True)
class Target:
    """A workload to evict, and why (``InClusterQueue``, ``InCohortReclamation``, ...)."""

    workload: str
    cluster_queue: str
    reason: str


@dataclass(frozen=True, slots=True)
class Preemptor:
    """The pending workload that needs room."""

    key: str
    uid: str
    priority: int
    timestamp: datetime
    cq: ClusterQueueInfo


@dataclass(slots=True)
class PreemptionHistory:
    """Who evicted whom by preemption, for the loop guard (``candidates.loop_guard``).

    Only workloads that took part in a preemption have entries.  The history
    is the record of one unchanged input: ``restart`` forgets the part that an
    outside change (a workload finished or deleted, a quota edited) may have
    made stale, so a preemption barred before may be issued again.
    """

    preempted_by: dict[str, set[str]] = field(default_factory=dict)
    """Victim -> every workload that evicted it."""
    since_admission: dict[str, set[str]] = field(default_factory=dict)
    """Preemptor -> the workloads it evicted since it was last admitted."""

    def __bool__(self) -> bool:
        return bool(self.preempted_by or self.since_admission)

    def evicted(self, preemptor: str, victim: str) -> None:
        """``preemptor`` evicted ``victim``."""
        self.preempted_by.setdefault(victim, set()).add(preemptor)
        self.since_admission.setdefault(preemptor, set()).add(victim)

    def not_recorded(self, preemptor: str, victim: str) -> None:
        """That eviction could not be written: it did not happen."""
        self.preempted_by.get(victim, set()).discard(preemptor)
        self.since_admission.get(preemptor, set()).discard(victim)

    def admitted(self, workload: str) -> None:
        self.since_admission.pop(workload, None)

    def restart(self, keep: Callable[[str], bool] | None = None) -> None:
        """Forget every workload's history (``keep``: except those for which it is true)."""
        for table in (self.preempted_by, self.since_admission):
            for key in [key for key in table if keep is None or not keep(key)]:
                del table[key]

    def guarded(self, preemptor: str) -> set[str]:
        """The workloads that led to ``preemptor``'s eviction, and those it evicted: pure."""
        ancestors: set[str] = set()
        stack = list(self.preempted_by.get(preemptor, ()))
        while stack:
            key = stack.pop()
            if key not in ancestors:
                ancestors.add(key)
                stack.extend(self.preempted_by.get(key, ()))
        return ancestors | self.since_admission.get(preemptor, set())


@dataclass(slots=True)
class PreemptionContext:
    """What a victim search reads: admitted workloads per CQ, their records, fair sharing."""

    admitted: Mapping[str, set[str]]
    records: Mapping[str, WorkloadRecord]
    cluster_queues: Mapping[str, ClusterQueueInfo]
    fair_sharing: bool = False
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    excluded: set[str] = field(default_factory=set)
    """Workloads already simulated as gone (earlier victims of this cycle)."""
    history: PreemptionHistory = field(default_factory=PreemptionHistory)
    """Past evictions by preemption, read by the loop guard."""
    local_queue_usage: Callable[[str], Callable[[str], float] | None] | None = None
    """ClusterQueue -> its LocalQueues' admission fair sharing usage (LocalQueue key ->
    usage), None where the queue does not order by it (docs/concepts.md#admission-fair-sharing)."""


__all__ = [
    "DEFAULT_STRATEGIES",
    "LESS_THAN_INITIAL_SHARE",
    "LESS_THAN_OR_EQUAL_TO_FINAL_SHARE",
    "PreemptionContext",
    "PreemptionHistory",
    "Preemptor",
    "Target",
]
