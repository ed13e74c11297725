"""What a victim search reads and returns: the preemptor, the state it searches, the targets.

Kept apart from the search itself so that ``candidates``, ``classical`` and
``fair`` can all import these types without importing the package that
imports them (no import circle, no ``TYPE_CHECKING``).  The fair-sharing
strategy names live here for the same reason: the context's default needs
them and ``fair`` implements them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.state import WorkloadRecord

LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
DEFAULT_STRATEGIES = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)
"""Fair-sharing preemption strategies when the Configuration names none (8.5)."""


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
class PreemptionContext:
    """What a victim search reads: admitted workloads per CQ, their records, fair sharing."""

    admitted: Mapping[str, set[str]]
    records: Mapping[str, WorkloadRecord]
    cluster_queues: Mapping[str, ClusterQueueInfo]
    fair_sharing: bool = False
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    excluded: set[str] = field(default_factory=set)
    """Workloads already simulated as gone (earlier victims of this cycle, 4.5 step 0)."""


__all__ = [
    "DEFAULT_STRATEGIES",
    "LESS_THAN_INITIAL_SHARE",
    "LESS_THAN_OR_EQUAL_TO_FINAL_SHARE",
    "PreemptionContext",
    "Preemptor",
    "Target",
]
