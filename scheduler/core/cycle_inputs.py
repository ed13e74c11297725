"""What a scheduling cycle may touch: three narrow views and its options.

The cycle (``scheduler.core.cycle``) does not receive the engine.  It reads
and charges quota through ``CycleQuota`` (answered by ``QuotaCache``, its
quota tree through ``CycleTree``), takes heads from and returns them to their
queues through ``CycleQueues`` (answered by the queue manager's
``PendingQueues``), learns what routing has to report through
``CycleRouting`` (answered by ``QueueManager``), reads workload records from
the engine's record store, and follows ``SchedulingOptions``.  Writing the
views down as protocols keeps the cycle's reach visible and checked by mypy:
anything else the cache or the queue manager can do (applying objects,
routing) is not the cycle's business.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from scheduler.api.models import ResourceFlavorSpec
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.decisions import Pending
from scheduler.core.preemption.context import DEFAULT_STRATEGIES
from scheduler.core.resources import FRValues
from scheduler.core.state import WorkloadRecord
from scheduler.core.tas.cache import TopologyCache
from scheduler.core.tas.held import DomainCharge


@dataclass(frozen=True, slots=True)
class SchedulingOptions:
    """The Configuration and engine switches a cycle follows."""

    one_admission_per_queue: bool = False
    """Run a single Kueue round per cycle instead of rounds until nothing is admitted."""
    resume_flavor_scan: bool = True
    """Resume a flavor scan after the last examined flavor (off: always start at the first).

    See docs/scheduling.md#flavor-scan-position.
    """
    fair_sharing: bool = False
    ignore_undeclared: bool = False
    """``resources.quotaCheckStrategy: IgnoreUndeclared``: uncovered resources do not block."""
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    """Fair-sharing preemption strategies, in order."""
    block_admission: bool = False
    """waitForPodsReady ``blockAdmission``: admit nothing while a workload holding quota is
    not ``PodsReady`` (docs/configuration.md#waitforpodsready)."""


class CycleTree(Protocol):
    """The quota tree as a cycle sees it."""

    def ensure_forest(self) -> None: ...

    def allocatable_generation(self, cq: str) -> int: ...

    def tree_members(self, name: str) -> list[str]: ...


class CycleQuota(Protocol):
    """The quota cache as a cycle sees it."""

    @property
    def cluster_queues(self) -> Mapping[str, ClusterQueueInfo]: ...

    @property
    def flavors(self) -> Mapping[str, ResourceFlavorSpec]: ...

    @property
    def admitted(self) -> Mapping[str, set[str]]:
        """ClusterQueue -> keys of its admitted workloads (the preemption candidates)."""
        ...

    @property
    def tree(self) -> CycleTree:
        """The cohort forest over the quotas (docs/scheduling.md#the-quota-tree)."""
        ...

    def can_schedule(self, name: str) -> bool:
        """Whether a cycle may pop the head of ``name`` (active, no cohort cycle)."""
        ...

    def namespace_matches(self, info: ClusterQueueInfo, namespace: str) -> bool: ...

    def charge(
        self,
        record: WorkloadRecord,
        cq: str,
        usage: FRValues,
        reserved_at: datetime | None,
        placements: Sequence[DomainCharge] = (),
    ) -> None: ...

    def release(self, record: WorkloadRecord) -> list[str]:
        """Give back what ``record`` holds; the ClusterQueues it held quota in."""
        ...

    @property
    def topology(self) -> TopologyCache:
        """Nodes, Topologies and placements (docs/concepts.md#topology-aware-scheduling)."""
        ...

    def topology_levels(self, cq: str) -> dict[str, tuple[str, ...] | None]: ...

    def topology_delayed(self, cq: str) -> bool: ...


class CycleQueues(Protocol):
    """The pending queues as a cycle sees them."""

    def pop_head(self, cluster_queue: str) -> WorkloadRecord | None: ...

    def put_back(
        self, record: WorkloadRecord, cluster_queue: str, *, park: bool, sticky: bool
    ) -> None: ...

    def admitted(self, record: WorkloadRecord, cluster_queue: str) -> None: ...

    def unqueue(self, record: WorkloadRecord) -> None: ...

    def requeue_inadmissible(
        self, cluster_queue: str, keep_parked: Callable[[str], bool]
    ) -> int: ...

    def take_requeue_events(self) -> tuple[set[str], set[str]]: ...

    def local_queue_usage(self, cluster_queue: str) -> Callable[[str], float] | None:
        """Its LocalQueues' admission fair sharing usage; None if it does not order by it."""
        ...


class CycleRouting(Protocol):
    """The queue manager's routing as a cycle sees it: what it has to report."""

    def take_to_report(self) -> list[str]: ...

    def draining_local_queues(self) -> Mapping[str, set[str]]: ...

    def pending_status(self, record: WorkloadRecord) -> Pending | None: ...


__all__ = ["CycleQueues", "CycleQuota", "CycleRouting", "CycleTree", "SchedulingOptions"]
