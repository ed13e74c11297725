"""The scheduling engine: kuota's single source of scheduling truth (engine contract).

The live scheduler, ``kuota simulate`` and the tests all drive this class.  It
is pure and synchronous: objects come in through ``apply``/``remove``/
``finish``, decisions come out of ``cycle(now)``, and ``now`` is the only
clock.  Inside, the API objects are reduced to the engine's own records
(``ClusterQueueInfo``, ``WorkloadRecord``).

``Engine`` is a thin facade over three parts, as Kueue splits them:

* ``QuotaCache`` (``quota_cache``): flavors, ClusterQueues and Cohorts with
  their quotas, the cohort forest, admitted usage;
* ``QueueManager`` (``queue_manager``): LocalQueue routing and the
  per-ClusterQueue queues;
* ``CycleParts`` (``nomination``, run by ``cycle.run_cycle``): the cycle,
  which sees the other two through the narrow views of ``cycle_inputs`` only.

The workload records (one per key, shared by reference) move through the
first two as their Workloads change in ``WorkloadLifecycle``
(``workload_lifecycle``), with the priority classes they take their priority
from (``priorities``).  The engine turns the other API objects into calls on
its parts, and connects them: what the cache reports as affected becomes a
requeue event of the queue manager (docs/scheduling.md#requeueing: anything
that may free capacity or change what a queue can admit requeues the affected
trees at the start of the next cycle; Kueue batches them for a second, a cycle
is kuota's batch).

What the state says is asked of ``view`` (``EngineView``) and, for topology
placements on nodes, of ``placements`` (``PlacementView``; both in
``engine_view``): they read, never change.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from scheduler.api.config import Configuration
from scheduler.api.feature_gates import enabled
from scheduler.api.models import (
    AdmissionCheck,
    ClusterQueue,
    ClusterQueueSpec,
    Cohort,
    LocalQueue,
    ResourceFlavor,
    Topology,
    Workload,
    WorkloadPriorityClass,
)
from scheduler.api.pods_ready import wait_for_pods_ready
from scheduler.core.admission_checks import CheckInfo
from scheduler.core.admission_fair_sharing import (
    UsageLedger,
    seed_local_queue,
    settings_from,
    usage_based,
)
from scheduler.core.cycle import CycleParts, run_cycle
from scheduler.core.cycle_inputs import SchedulingOptions
from scheduler.core.decisions import CycleResult, WorkloadKey
from scheduler.core.engine_types import (
    ClusterQueueStatus,
    EngineObject,
    NamespaceInfo,
    NodeInfo,
    PodUsage,
    PriorityClassInfo,
    WorkloadState,
)
from scheduler.core.engine_view import EngineView, PlacementView
from scheduler.core.preemption import PreemptionHistory
from scheduler.core.preemption.context import DEFAULT_STRATEGIES
from scheduler.core.priorities import PriorityClasses
from scheduler.core.queue_manager import QueueManager
from scheduler.core.quota_cache import QuotaCache
from scheduler.core.state import WorkloadRecord
from scheduler.core.workload_lifecycle import WorkloadLifecycle


def _options(
    config: Configuration,
    *,
    one_admission_per_queue: bool,
    resume_flavor_scan: bool | None,
    pods_observed: bool = True,
) -> SchedulingOptions:
    """The cycle's options from the Configuration and the engine's switches: pure.

    ``resume_flavor_scan`` None: the feature gate ``FlavorFungibilityPreserveScanProgress``.
    """
    if resume_flavor_scan is None:
        resume_flavor_scan = enabled(config.feature_gates, "FlavorFungibilityPreserveScanProgress")
    resources, fair = config.resources, config.fair_sharing
    pods_ready = wait_for_pods_ready(config)
    strategies = tuple(getattr(fair, "preemption_strategies", ()) or ())
    return SchedulingOptions(
        one_admission_per_queue=one_admission_per_queue,
        resume_flavor_scan=resume_flavor_scan,
        fair_sharing=fair is not None and getattr(fair, "enable", True),
        ignore_undeclared=(
            resources is not None and resources.quota_check_strategy == "IgnoreUndeclared"
        ),
        strategies=strategies or DEFAULT_STRATEGIES,
        block_admission=pods_observed and pods_ready is not None and pods_ready.block_admission,
    )


class Engine:
    """Quota cache, queue manager and cycle behind one facade (see the module docstring)."""

    def __init__(
        self,
        config: Configuration | None = None,
        *,
        one_admission_per_queue: bool = False,
        resume_flavor_scan: bool | None = None,
        pods_observed: bool = True,
    ) -> None:
        self.config = config or Configuration()
        self.options = _options(
            self.config,
            one_admission_per_queue=one_admission_per_queue,
            resume_flavor_scan=resume_flavor_scan,
            pods_observed=pods_observed,
        )
        records: dict[WorkloadKey, WorkloadRecord] = {}
        priorities = PriorityClasses(boost=enabled(self.config.feature_gates, "PriorityBoost"))
        self.cache = QuotaCache()
        settings = settings_from(self.config)
        self.queues = QueueManager(
            self.cache, records, UsageLedger(settings) if settings is not None else None
        )
        self.history = PreemptionHistory()
        """Past evictions by preemption, for the loop guard (``preemption.candidates``)."""
        self._cluster_queue_specs: dict[str, ClusterQueueSpec] = {}
        """The spec of each ClusterQueue as last applied: only a new queue or a new spec moves
        workloads; kuota's own status writes come back as updates about once a second."""
        self._workloads = WorkloadLifecycle(
            self.config,
            records=records,
            cache=self.cache,
            queues=self.queues,
            history=self.history,
            priorities=priorities,
        )
        self._cycle = CycleParts(
            quota=self.cache,
            queues=self.queues.pending,
            routing=self.queues,
            records=records,
            options=self.options,
            history=self.history,
        )
        self.view = EngineView(
            records=records,
            cache=self.cache,
            queues=self.queues,
            priorities=priorities,
            history=self.history,
            options=self.options,
        )
        """What the state says: workloads, queues, Cohorts, priorities (read-only)."""
        self.placements = PlacementView(records=records, cache=self.cache)
        """What topology placements hold on nodes (read-only)."""

    # --- state: upserts and removals -------------------------------------------------

    def apply(self, obj: EngineObject) -> None:
        """Insert or update one object (idempotent)."""
        cache, queues = self.cache, self.queues
        if isinstance(obj, Workload):
            self._workloads.apply(obj)
        elif isinstance(obj, ClusterQueue):
            if cache.apply_cluster_queue(obj):
                self.history.restart()
            queues.add_cluster_queue(obj.name, usage_based=usage_based(obj.spec))
            if self._cluster_queue_specs.get(obj.name) != obj.spec:
                self._cluster_queue_specs[obj.name] = obj.spec
                queues.pending.requeue_tree(obj.name)
                queues.reroute_cluster_queue(obj.name)
        elif isinstance(obj, LocalQueue):
            key = f"{obj.metadata.namespace}/{obj.name}"
            queues.apply_local_queue(key, str(obj.spec.cluster_queue or ""), obj.spec.stop_policy)
            seed_local_queue(queues.fair_usage, key, obj)
        elif isinstance(obj, ResourceFlavor):
            self._cluster_queues_changed(cache.apply_flavor(obj.name, obj.spec))
        elif isinstance(obj, Cohort):
            if cache.tree.apply_cohort(obj):
                self.history.restart()
            queues.pending.requeue_tree(obj.name)
        elif isinstance(obj, WorkloadPriorityClass):
            self._workloads.set_priority(("WorkloadPriorityClass", obj.name), obj.value or 0)
        elif isinstance(obj, PriorityClassInfo):
            self._workloads.set_priority(("PriorityClass", obj.name), obj.value)
        elif isinstance(obj, NamespaceInfo):
            for name in cache.set_namespace_labels(obj.name, obj.labels):
                queues.pending.requeue_cluster_queue(name)
        elif isinstance(obj, Topology):
            levels = tuple(level.node_label for level in obj.spec.levels)
            self._cluster_queues_changed(
                cache.using_flavors(cache.topology.apply_topology(obj.name, levels))
            )
        elif isinstance(obj, NodeInfo):
            if cache.topology.apply_node(obj):
                self._topology_room_changed()
        elif isinstance(obj, PodUsage):
            if cache.topology.apply_pod(obj.key, obj.node, obj.requests):
                self._topology_room_changed()
        elif isinstance(obj, AdmissionCheck):
            active = obj.status.conditions
            check = CheckInfo(
                controller=obj.spec.controller_name,
                active=any(c.type == "Active" and c.status == "True" for c in active),
            )
            self._cluster_queues_changed(cache.set_admission_check(obj.name, check))
        else:
            raise TypeError(f"the engine does not handle {type(obj).__name__}")

    def remove(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Forget one object; removing something unknown is a no-op."""
        cache, queues = self.cache, self.queues
        if kind == "Workload":
            self._workloads.remove(f"{namespace or ''}/{name}")
        elif kind == "ClusterQueue":
            self.history.restart()
            self._cluster_queue_specs.pop(name, None)
            if cache.remove_cluster_queue(name):
                queues.pending.requeue_tree(name)
                queues.reroute_cluster_queue(name)
        elif kind == "LocalQueue":
            queues.remove_local_queue(f"{namespace or ''}/{name}")
        elif kind == "ResourceFlavor":
            self._cluster_queues_changed(cache.apply_flavor(name, None))
        elif kind == "Cohort":
            self.history.restart()
            if cache.tree.remove_cohort(name):
                queues.pending.requeue_tree(name)
        elif kind in ("WorkloadPriorityClass", "PriorityClass"):
            self._workloads.set_priority((kind, name), None)
        elif kind == "Namespace":
            for cq in cache.set_namespace_labels(name, None):
                queues.pending.requeue_cluster_queue(cq)
        elif kind == "AdmissionCheck":
            self._cluster_queues_changed(cache.set_admission_check(name, None))
        elif kind == "Topology":
            self._cluster_queues_changed(
                cache.using_flavors(cache.topology.apply_topology(name, None))
            )
        elif kind == "Node":
            if cache.topology.remove_node(name):
                self._topology_room_changed()
        elif kind == "Pod":
            if cache.topology.apply_pod(f"{namespace or ''}/{name}", None, None):
                self._topology_room_changed()

    def release(self, workload: WorkloadKey) -> None:
        """The evicted workload's pods are gone: release its quota and requeue it.

        See docs/scheduling.md#eviction-and-requeue.

        Until this call a victim keeps its quota counted (and is not evicted
        twice), so released quota is never counted twice.  A workload that is
        not being evicted is left alone.
        """
        self._workloads.release(workload)

    def eviction_not_recorded(self, victim: WorkloadKey, preemptor: WorkloadKey | None) -> None:
        """The eviction of ``victim`` could not be written: it did not happen.

        The preemptor's history forgets it (a later cycle may choose the same
        victim again); the caller then re-applies the victim as the API server
        has it.
        """
        if preemptor is not None:
            self.history.not_recorded(preemptor, victim)

    def admission_recorded(self, workload: WorkloadKey) -> None:
        """The Workload's status now records the admission this engine made (the write's answer).

        From here on the object decides: a later view of it without the
        reservation releases the quota.  Views older than that answer never
        reach the engine (the mirror drops them).
        """
        self._workloads.admission_recorded(workload)

    def finish(self, workload: WorkloadKey) -> None:
        """The workload completed: release its quota (a requeue event) and drop it from queues."""
        self._workloads.finish(workload)

    def pods_known(self) -> None:
        """Every pod on the nodes is known now: TAS flavors are ready, their queues retried."""
        self.cache.topology.pods_known = True
        self._topology_room_changed()

    # --- scheduling -----------------------------------------------------------------

    def cycle(self, now: datetime) -> CycleResult:
        """One scheduling cycle (docs/scheduling.md#the-scheduling-cycle)."""
        self._workloads.backoffs(now)
        self.queues.sample_fair_usage(now)
        result, _ = run_cycle(self._cycle, now)
        return result

    def sample_fair_usage(self, now: datetime) -> None:
        """Sample the LocalQueues' usage that is due (docs/concepts.md#admission-fair-sharing)."""
        self.queues.sample_fair_usage(now)

    def run_until_steady(
        self,
        now: datetime,
        *,
        max_cycles: int = 10_000,
        after_cycle: Callable[[CycleResult], None] | None = None,
    ) -> tuple[list[CycleResult], bool]:
        """Cycle until a cycle changes nothing (no admission, eviction or queue move).

        Returns (results, whether that steady state was reached).
        ``after_cycle`` runs after every cycle with its result (``kuota
        simulate`` releases every victim there: a simulation has no pods).
        """
        results: list[CycleResult] = []
        for _ in range(max_cycles):
            self._workloads.backoffs(now)
            result, changed = run_cycle(self._cycle, now)
            results.append(result)
            if after_cycle is not None:
                after_cycle(result)
            if not changed:
                return results, True
        return results, False

    # --- connecting the parts ---------------------------------------------------------

    def _cluster_queues_changed(self, names: list[str]) -> None:
        """What ``names`` may admit changed (a flavor or check came or went): requeue, reroute."""
        for name in names:
            self.queues.pending.requeue_cluster_queue(name)
            self.queues.reroute_cluster_queue(name)

    def _topology_room_changed(self) -> None:
        """Nodes or the pods on them changed: the queues with TAS flavors may admit now."""
        for name in self.cache.tas_cluster_queues():
            self.queues.pending.requeue_cluster_queue(name)


__all__ = [
    "ClusterQueueStatus",
    "Engine",
    "EngineObject",
    "NamespaceInfo",
    "NodeInfo",
    "PodUsage",
    "PriorityClassInfo",
    "WorkloadState",
]
