"""What the engine's state says, asked by the adapters, the CLI and the tests (pure).

``Engine.view`` is an ``EngineView`` over the engine's parts: the workload
records, the quota cache, the queue manager, the priority classes and the
preemption history.  Every method reads; none changes the engine, so a
caller that holds the view cannot move a workload or a quota.  The state
changes stay on ``Engine`` (``apply``, ``remove``, ``release``, ``finish``,
``cycle``).

The questions about topology placements on nodes (which workloads a failed
or tainted node holds, and where their pods could go instead) are the node
adapter's: ``PlacementView``, ``Engine.placements``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from datetime import datetime

from scheduler.api.models import ResourceFlavorSpec, Taint
from scheduler.core.admission_checks import applicable_checks
from scheduler.core.cycle_inputs import SchedulingOptions
from scheduler.core.decisions import PodSetAdmission, WorkloadKey
from scheduler.core.engine_types import ClusterQueueStatus, WorkloadState
from scheduler.core.fair_share import Share
from scheduler.core.node_replacement import replacement_admission
from scheduler.core.node_taints import failing_taint_for
from scheduler.core.preemption import PreemptionContext, PreemptionHistory
from scheduler.core.priorities import PriorityClasses
from scheduler.core.queue_manager import QueueManager
from scheduler.core.queues import ClusterQueueQueue
from scheduler.core.quota_cache import QuotaCache
from scheduler.core.readouts import cluster_queue_status, node_share, workload_state
from scheduler.core.state import ADMITTED, WorkloadRecord


class EngineView:
    """Read-only questions about workloads, queues, Cohorts and priorities (module docstring)."""

    def __init__(
        self,
        *,
        records: Mapping[WorkloadKey, WorkloadRecord],
        cache: QuotaCache,
        queues: QueueManager,
        priorities: PriorityClasses,
        history: PreemptionHistory,
        options: SchedulingOptions,
    ) -> None:
        self._records = records
        self._cache = cache
        self._queues = queues
        self._priorities = priorities
        self._history = history
        self._options = options

    # --- workloads -------------------------------------------------------------------

    @property
    def records(self) -> Mapping[WorkloadKey, WorkloadRecord]:
        """The workload records by key, for reading (tests, diagnostics)."""
        return self._records

    def workload_keys(self) -> tuple[WorkloadKey, ...]:
        """Every workload the engine knows, sorted: pure."""
        return tuple(sorted(self._records))

    def has_workload(self, workload: WorkloadKey) -> bool:
        """Whether the engine knows the workload (in any state): pure."""
        return workload in self._records

    def workload_state(self, workload: WorkloadKey) -> WorkloadState:
        """What the workload's conditions say now (state, reason, message and their structure)."""
        record = self._records.get(workload)
        if record is None:
            raise KeyError(workload)
        return workload_state(record, self._queues)

    def queue_position(self, workload: WorkloadKey) -> tuple[int, int] | None:
        """(1-based position, pending count) in its ClusterQueue's queue order; None if not queued.

        Queue order (priority, then age; docs/scheduling.md#queue-order) over every pending workload
        of the queue, active and inadmissible.  Pure.
        """
        record = self._records.get(workload)
        return self._queues.pending.position(record) if record is not None else None

    # --- queues ----------------------------------------------------------------------

    def cluster_queue_names(self) -> tuple[str, ...]:
        """Every ClusterQueue the engine knows (terminating ones included), sorted: pure."""
        return tuple(sorted(self._cache.cluster_queues))

    def cluster_queue_status(self, name: str) -> ClusterQueueStatus:
        """Pending and admitted counts, usage, borrowing and the ``Active`` condition.

        See docs/scheduling.md#queue-status.
        """
        if name not in self._cache.cluster_queues:
            raise KeyError(name)
        return cluster_queue_status(
            name,
            self._cache,
            self._queues,
            self._records,
            fair_sharing=self._options.fair_sharing,
        )

    def pending_queue(self, cluster_queue: str) -> ClusterQueueQueue | None:
        """The pending workloads of ``cluster_queue`` in queue order, for reading (their
        ``ranking``); None when the engine knows no such ClusterQueue.  Pure."""
        if cluster_queue not in self._cache.cluster_queues:
            return None
        return self._queues.pending.queue(cluster_queue) or ClusterQueueQueue()

    def holds_reservations(self, cluster_queue: str) -> bool:
        """Whether any workload holds quota in ``cluster_queue`` (known to the engine or not)."""
        return bool(self._cache.admitted.get(cluster_queue))

    def admission_checks_for(
        self, cluster_queue: str, flavors: Iterable[str]
    ) -> tuple[str, ...] | None:
        """The checks of ``cluster_queue`` that apply to a workload on ``flavors``: pure.

        None when the ClusterQueue is unknown.
        """
        info = self._cache.cluster_queues.get(cluster_queue)
        return None if info is None else applicable_checks(info.check_rules, flavors)

    def local_queue_target(self, namespace: str, name: str) -> str | None:
        """The ClusterQueue of LocalQueue ``namespace/name``; None if it is unknown: pure."""
        known = self._queues.local_queues.get(f"{namespace}/{name}")
        return known[0] if known is not None else None

    def local_queue_fair_usage(self, key: str) -> tuple[dict[str, int], datetime] | None:
        """LocalQueue ``key``'s consumed resources (nano-units) and last sample; None with
        admission fair sharing off or before its first sample: pure."""
        ledger = self._queues.fair_usage
        entry = ledger.entry(key) if ledger is not None else None
        if entry is None or entry.last_update is None:
            return None
        return dict(entry.consumed), entry.last_update

    def cohort_share(self, name: str) -> Share | None:
        """A Cohort's dominant resource share; None with fair sharing off: pure.

        A Cohort the engine has not seen yet (no ClusterQueue and no spec) shares nothing.
        See docs/scheduling.md#dominant-resource-share.
        """
        if not self._options.fair_sharing:
            return None
        return node_share(self._cache.tree.forest.cohorts.get(name))

    # --- flavors, priorities, preemption ----------------------------------------------

    def flavor_specs(self) -> Mapping[str, ResourceFlavorSpec]:
        """Every ResourceFlavor the engine knows, by name (read-only view)."""
        return self._cache.flavors

    def priority_class_values(self, kind: str) -> dict[str, int]:
        """Name -> value of every ``PriorityClass`` or ``WorkloadPriorityClass`` known: pure."""
        return self._priorities.values(kind)

    def preemption_context(self) -> PreemptionContext:
        """What a victim search reads, over the current state (benchmarks, diagnostics): pure."""
        return PreemptionContext(
            admitted=self._cache.admitted,
            records=self._records,
            cluster_queues=self._cache.cluster_queues,
            fair_sharing=self._options.fair_sharing,
            strategies=self._options.strategies,
            history=self._history,
            local_queue_usage=self._queues.pending.local_queue_usage,
        )


class PlacementView:
    """Read-only questions about topology placements on nodes (module docstring)."""

    def __init__(self, *, records: Mapping[WorkloadKey, WorkloadRecord], cache: QuotaCache) -> None:
        self._records = records
        self._cache = cache

    def uses_topology(self) -> bool:
        """Whether a ResourceFlavor names a Topology (nodes and pods then matter)."""
        return self._cache.topology.any_flavor()

    def placed_on_node(self, node: str) -> list[WorkloadKey]:
        """Workloads holding quota, not being evicted, whose topology placement put pods on
        ``node``: pure."""
        return [
            key
            for key in self._cache.topology.held.placed_on(node)
            if (record := self._records.get(key)) is not None and not record.evicted
        ]

    def failing_taint(self, workload: WorkloadKey, node: str) -> Taint | None:
        """A taint of ``node`` that fails it for the workload placed there, or None
        (docs/concepts.md#topology-aware-scheduling): pure."""
        record = self._records.get(workload)
        if record is None or record.state != ADMITTED:
            return None
        return failing_taint_for(record.admission, record.pod_sets, node, self._cache.topology)

    def replacement_admission(
        self, workload: WorkloadKey, failed: Collection[str]
    ) -> tuple[PodSetAdmission, ...] | str | None:
        """The workload's admission with the pods of ``failed`` nodes placed elsewhere, or why
        not; None when it holds no quota (docs/concepts.md#topology-aware-scheduling): pure."""
        record = self._records.get(workload)
        if record is None or record.state != ADMITTED:
            return None
        return replacement_admission(
            record.admission, record.pod_sets, failed, self._cache.topology
        )


__all__ = ["EngineView", "PlacementView"]
