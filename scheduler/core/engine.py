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

The engine owns the workload records (one per key, shared by reference) and
the priority classes, turns API objects into calls on its parts, and
connects them: what the cache reports as affected becomes a requeue event
of the queue manager (docs/scheduling.md#requeueing: anything that may free capacity or
change what a queue can admit requeues the affected trees at the start of
the next cycle; Kueue batches them for a second, a cycle is kuota's batch).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
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
    ResourceFlavorSpec,
    Taint,
    Topology,
    Workload,
    WorkloadPriorityClass,
)
from scheduler.api.pods_ready import wait_for_pods_ready
from scheduler.api.refs import ADMISSION_GATED_BY_ANNOTATION as GATE_ANNOTATION
from scheduler.api.refs import JOB_UID_LABEL as JOB_UID_LABEL
from scheduler.api.refs import PRIORITY_BOOST_ANNOTATION
from scheduler.api.refs import WORKLOAD_SLICE_REPLACEMENT_ANNOTATION as REPLACES_ANNOTATION
from scheduler.core.admission_checks import CheckInfo, applicable_checks
from scheduler.core.admission_fair_sharing import (
    UsageLedger,
    seed_local_queue,
    settings_from,
    usage_based,
)
from scheduler.core.cycle import CycleParts, run_cycle
from scheduler.core.cycle_inputs import SchedulingOptions
from scheduler.core.decisions import CycleResult, PodSetAdmission, WorkloadKey
from scheduler.core.engine_types import (
    ClusterQueueStatus,
    EngineObject,
    NamespaceInfo,
    NodeInfo,
    PodUsage,
    PriorityClassInfo,
    WorkloadState,
)
from scheduler.core.fair_share import Share
from scheduler.core.node_replacement import replacement_admission
from scheduler.core.node_taints import failing_taint_for
from scheduler.core.preemption import PreemptionContext, PreemptionHistory
from scheduler.core.preemption.context import DEFAULT_STRATEGIES
from scheduler.core.queue_manager import PriorityRef, QueueManager
from scheduler.core.queues import ClusterQueueQueue
from scheduler.core.quota_cache import QuotaCache
from scheduler.core.readouts import cluster_queue_status, node_share, workload_state
from scheduler.core.state import ADMITTED, FINISHED, PENDING, WorkloadRecord
from scheduler.core.topology_fit import recorded_charges
from scheduler.core.workload import (
    failed_admission_checks,
    holds_reservation,
    is_finished,
    pod_set_infos,
    queue_timestamp,
    reservation,
)


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
        gates = self.config.feature_gates
        self._priority_boost = enabled(gates, "PriorityBoost")
        """The ``kueue.x-k8s.io/priority-boost`` annotation adds to the priority."""
        self._gated_by = enabled(gates, "AdmissionGatedBy")
        """The ``kueue.x-k8s.io/admission-gated-by`` annotation holds admission back."""
        self.options = _options(
            self.config,
            one_admission_per_queue=one_admission_per_queue,
            resume_flavor_scan=resume_flavor_scan,
            pods_observed=pods_observed,
        )
        pods_ready = wait_for_pods_ready(self.config)
        self._eviction_timestamp = (
            pods_ready is None or pods_ready.requeuing_strategy.timestamp == "Eviction"
        )
        """requeuingStrategy.timestamp: a PodsReady timeout orders by its eviction time."""
        self._records: dict[WorkloadKey, WorkloadRecord] = {}
        self._priorities: dict[PriorityRef, int] = {}
        """(kind, name) of a PriorityClass or WorkloadPriorityClass -> its value."""
        self._backoff: dict[WorkloadKey, datetime] = {}
        """Pending workloads whose ``requeueState.requeueAt`` may lie ahead: kept out of
        their queue until then (``cycle``)."""
        self.cache = QuotaCache()
        settings = settings_from(self.config)
        self.queues = QueueManager(
            self.cache, self._records, UsageLedger(settings) if settings is not None else None
        )
        self.history = PreemptionHistory()
        """Past evictions by preemption, for the loop guard (``preemption.candidates``)."""
        self._cluster_queue_specs: dict[str, ClusterQueueSpec] = {}
        """The spec of each ClusterQueue as last applied: only a new queue or a new spec moves
        workloads; kuota's own status writes come back as updates about once a second."""
        self._cycle = CycleParts(
            quota=self.cache,
            queues=self.queues,
            records=self._records,
            options=self.options,
            history=self.history,
        )

    # --- state: upserts and removals -------------------------------------------------

    def apply(self, obj: EngineObject) -> None:
        """Insert or update one object (idempotent)."""
        cache, queues = self.cache, self.queues
        if isinstance(obj, Workload):
            self._apply_workload(obj)
        elif isinstance(obj, ClusterQueue):
            if cache.apply_cluster_queue(obj):
                self.history.restart()
            queues.add_cluster_queue(obj.name)
            queues.set_usage_based(obj.name, usage_based(obj.spec))
            if self._cluster_queue_specs.get(obj.name) != obj.spec:
                self._cluster_queue_specs[obj.name] = obj.spec
                queues.requeue_tree(obj.name)
                queues.reroute_cluster_queue(obj.name)
        elif isinstance(obj, LocalQueue):
            key = f"{obj.metadata.namespace}/{obj.name}"
            queues.apply_local_queue(key, str(obj.spec.cluster_queue or ""), obj.spec.stop_policy)
            seed_local_queue(queues.fair_usage, key, obj)
        elif isinstance(obj, ResourceFlavor):
            self._cluster_queues_changed(cache.apply_flavor(obj.name, obj.spec))
        elif isinstance(obj, Cohort):
            if cache.apply_cohort(obj):
                self.history.restart()
            queues.requeue_tree(obj.name)
        elif isinstance(obj, WorkloadPriorityClass):
            self._set_priority(("WorkloadPriorityClass", obj.name), obj.value or 0)
        elif isinstance(obj, PriorityClassInfo):
            self._set_priority(("PriorityClass", obj.name), obj.value)
        elif isinstance(obj, NamespaceInfo):
            for name in cache.set_namespace_labels(obj.name, obj.labels):
                queues.requeue_cluster_queue(name)
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
            record = self._records.pop(f"{namespace or ''}/{name}", None)
            if record is not None:
                self._restart_history(record.cluster_queue)
                self._release(record)
                queues.unqueue(record)
                queues.unindex(record)
        elif kind == "ClusterQueue":
            self.history.restart()
            self._cluster_queue_specs.pop(name, None)
            if cache.remove_cluster_queue(name):
                queues.requeue_tree(name)
                queues.reroute_cluster_queue(name)
        elif kind == "LocalQueue":
            queues.remove_local_queue(f"{namespace or ''}/{name}")
            queues.forget_fair_usage(f"{namespace or ''}/{name}")
        elif kind == "ResourceFlavor":
            self._cluster_queues_changed(cache.apply_flavor(name, None))
        elif kind == "Cohort":
            self.history.restart()
            if cache.remove_cohort(name):
                queues.requeue_tree(name)
        elif kind in ("WorkloadPriorityClass", "PriorityClass"):
            self._set_priority((kind, name), None)
        elif kind == "Namespace":
            for cq in cache.set_namespace_labels(name, None):
                queues.requeue_cluster_queue(cq)
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
        record = self._records.get(workload)
        if record is None or record.state != ADMITTED or not record.evicted:
            return
        self._unreserve(record)
        self.queues.route(record, force_heap=True)

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
        record = self._records.get(workload)
        if record is not None:
            record.assumed = False

    def finish(self, workload: WorkloadKey) -> None:
        """The workload completed: release its quota (a requeue event) and drop it from queues."""
        record = self._records.get(workload)
        if record is None or record.state == FINISHED:
            return
        self._release(record)
        self.queues.unqueue(record)
        record.state = FINISHED
        record.forget_status()
        self._restart_history(record.cluster_queue)

    # --- scheduling -----------------------------------------------------------------

    def cycle(self, now: datetime) -> CycleResult:
        """One scheduling cycle (docs/scheduling.md#the-scheduling-cycle)."""
        self._backoffs(now)
        self.queues.sample_fair_usage(now)
        result, _ = run_cycle(self._cycle, now)
        return result

    def sample_fair_usage(self, now: datetime) -> None:
        """Sample the LocalQueues' usage that is due (docs/concepts.md#admission-fair-sharing)."""
        self.queues.sample_fair_usage(now)

    def local_queue_fair_usage(self, key: str) -> tuple[dict[str, int], datetime] | None:
        """LocalQueue ``key``'s consumed resources (nano-units) and last sample; None with
        admission fair sharing off or before its first sample: pure."""
        return self.queues.fair_usage_status(key)

    def _backoffs(self, now: datetime) -> None:
        """Keep workloads in backoff out of their queues; queue those whose time came."""
        for key, at in list(self._backoff.items()):
            record = self._records.get(key)
            if record is None or record.requeue_at != at:
                del self._backoff[key]
            elif record.state == ADMITTED:
                continue  # still held while its job stops: the backoff counts once released
            elif record.state != PENDING:
                del self._backoff[key]
            elif at > now:
                self.queues.unqueue(record)
            else:
                del self._backoff[key]
                if record.queued_in is None:  # held out until now: back in its queue
                    self.queues.route(record, force_heap=True)

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
            self._backoffs(now)
            result, changed = run_cycle(self._cycle, now)
            results.append(result)
            if after_cycle is not None:
                after_cycle(result)
            if not changed:
                return results, True
        return results, False

    # --- reading state ----------------------------------------------------------------

    def workload_state(self, workload: WorkloadKey) -> WorkloadState:
        """What the workload's conditions say now (state, reason, message and their structure)."""
        record = self._records.get(workload)
        if record is None:
            raise KeyError(workload)
        return workload_state(record, self.queues)

    def cluster_queue_status(self, name: str) -> ClusterQueueStatus:
        """Pending and admitted counts, usage, borrowing and the ``Active`` condition.

        See docs/scheduling.md#queue-status.
        """
        if name not in self.cache.cluster_queues:
            raise KeyError(name)
        return cluster_queue_status(
            name, self.cache, self.queues, self._records, fair_sharing=self.options.fair_sharing
        )

    def cohort_share(self, name: str) -> Share | None:
        """A Cohort's dominant resource share; None with fair sharing off: pure.

        A Cohort the engine has not seen yet (no ClusterQueue and no spec) shares nothing.
        See docs/scheduling.md#dominant-resource-share.
        """
        if not self.options.fair_sharing:
            return None
        return node_share(self.cache.forest.cohorts.get(name))

    def admission_checks_for(
        self, cluster_queue: str, flavors: Iterable[str]
    ) -> tuple[str, ...] | None:
        """The checks of ``cluster_queue`` that apply to a workload on ``flavors``: pure.

        None when the ClusterQueue is unknown.
        """
        info = self.cache.cluster_queues.get(cluster_queue)
        return None if info is None else applicable_checks(info.check_rules, flavors)

    def workload_keys(self) -> tuple[WorkloadKey, ...]:
        """Every workload the engine knows, sorted: pure."""
        return tuple(sorted(self._records))

    def cluster_queue_names(self) -> tuple[str, ...]:
        """Every ClusterQueue the engine knows (terminating ones included), sorted: pure."""
        return tuple(sorted(self.cache.cluster_queues))

    def has_workload(self, workload: WorkloadKey) -> bool:
        """Whether the engine knows the workload (in any state): pure."""
        return workload in self._records

    def queue_position(self, workload: WorkloadKey) -> tuple[int, int] | None:
        """(1-based position, pending count) in its ClusterQueue's queue order; None if not queued.

        Queue order (priority, then age; docs/scheduling.md#queue-order) over every pending workload
        of the queue, active and inadmissible.  Pure.
        """
        record = self._records.get(workload)
        return self.queues.position(record) if record is not None else None

    def pending_queue(self, cluster_queue: str) -> ClusterQueueQueue | None:
        """The pending workloads of ``cluster_queue`` in queue order, for reading (their
        ``ranking``); None when the engine knows no such ClusterQueue.  Pure."""
        if cluster_queue not in self.cache.cluster_queues:
            return None
        return self.queues.queue(cluster_queue) or ClusterQueueQueue()

    def local_queue_target(self, namespace: str, name: str) -> str | None:
        """The ClusterQueue of LocalQueue ``namespace/name``; None if it is unknown: pure."""
        return self.queues.local_queue_target(f"{namespace}/{name}")

    @property
    def records(self) -> Mapping[WorkloadKey, WorkloadRecord]:
        """The workload records by key, for reading (tests, diagnostics)."""
        return self._records

    def holds_reservations(self, cluster_queue: str) -> bool:
        """Whether any workload holds quota in ``cluster_queue`` (known to the engine or not)."""
        return bool(self.cache.admitted.get(cluster_queue))

    def pods_known(self) -> None:
        """Every pod on the nodes is known now: TAS flavors are ready, their queues retried."""
        self.cache.topology.pods_known = True
        self._topology_room_changed()

    def replacement_admission(
        self, workload: WorkloadKey, failed: Collection[str]
    ) -> tuple[PodSetAdmission, ...] | str | None:
        """The workload's admission with the pods of ``failed`` nodes placed elsewhere, or why
        not; None when it holds no quota (docs/concepts.md#topology-aware-scheduling): pure."""
        record = self._records.get(workload)
        if record is None or record.state != ADMITTED:
            return None
        return replacement_admission(record.admission, record.pod_sets, failed, self.cache.topology)

    def failing_taint(self, workload: WorkloadKey, node: str) -> Taint | None:
        """A taint of ``node`` that fails it for the workload placed there, or None
        (docs/concepts.md#topology-aware-scheduling): pure."""
        record = self._records.get(workload)
        if record is None or record.state != ADMITTED:
            return None
        return failing_taint_for(record.admission, record.pod_sets, node, self.cache.topology)

    def placed_on_node(self, node: str) -> list[WorkloadKey]:
        """Workloads holding quota, not being evicted, whose topology placement put pods on
        ``node``: pure."""
        return [
            key
            for key in self.cache.topology.placed_on(node)
            if (record := self._records.get(key)) is not None and not record.evicted
        ]

    def uses_topology(self) -> bool:
        """Whether a ResourceFlavor names a Topology (nodes and pods then matter)."""
        return self.cache.topology.any_flavor()

    def flavor_specs(self) -> Mapping[str, ResourceFlavorSpec]:
        """Every ResourceFlavor the engine knows, by name (read-only view)."""
        return self.cache.flavors

    def priority_class_values(self, kind: str) -> dict[str, int]:
        """Name -> value of every ``PriorityClass`` or ``WorkloadPriorityClass`` known: pure."""
        return {name: value for (k, name), value in self._priorities.items() if k == kind}

    def preemption_context(self) -> PreemptionContext:
        """What a victim search reads, over the current state (benchmarks, diagnostics): pure."""
        return PreemptionContext(
            admitted=self.cache.admitted,
            records=self._records,
            cluster_queues=self.cache.cluster_queues,
            fair_sharing=self.options.fair_sharing,
            strategies=self.options.strategies,
            history=self.history,
            local_queue_usage=self.queues.local_queue_usage,
        )

    # --- connecting the parts ---------------------------------------------------------

    def _release(self, record: WorkloadRecord) -> None:
        """Give back the quota ``record`` holds: a requeue event for every tree it held it in."""
        for cq in self.cache.release(record):
            self.queues.requeue_tree(cq)

    def _restart_history(self, cluster_queue: str | None) -> None:
        """A workload of ``cluster_queue``'s cohort tree left: forget that tree's preemptions.

        Capacity came free without a preemption, so a preemption the loop
        guard barred may be the right one now.
        """
        if not self.history:
            return
        members = set(self.cache.tree_members(cluster_queue)) if cluster_queue else set()

        def elsewhere(key: str) -> bool:
            record = self._records.get(key)
            return record is not None and record.cluster_queue not in members

        self.history.restart(elsewhere)

    def _cluster_queues_changed(self, names: list[str]) -> None:
        """What ``names`` may admit changed (a flavor or check came or went): requeue, reroute."""
        for name in names:
            self.queues.requeue_cluster_queue(name)
            self.queues.reroute_cluster_queue(name)

    def _topology_room_changed(self) -> None:
        """Nodes or the pods on them changed: the queues with TAS flavors may admit now."""
        for name in self.cache.tas_cluster_queues():
            self.queues.requeue_cluster_queue(name)

    def _set_priority(self, ref: PriorityRef, value: int | None) -> None:
        """A priority class changed (None: deleted); re-key the workloads that use it."""
        if value is None:
            if self._priorities.pop(ref, None) is None:
                return
        else:
            if self._priorities.get(ref) == value:
                return
            self._priorities[ref] = value
        self.history.restart()  # who may preempt whom changed
        for record in self.queues.with_priority_ref(ref):
            priority = self._priority_of(ref) + record.boost
            if priority != record.priority:
                record.priority = priority
                self.queues.requeue_one(record)

    def _priority_of(self, ref: PriorityRef | None) -> int:
        """The value of a priority class reference; 0 when none or unknown: pure.

        Any kind but ``PriorityClass`` names a WorkloadPriorityClass.
        """
        if ref is None:
            return 0
        kind, name = ref
        kind = "PriorityClass" if kind == "PriorityClass" else "WorkloadPriorityClass"
        return self._priorities.get((kind, name), 0)

    def _boost(self, annotations: Mapping[str, str]) -> int:
        """The priority boost of a Workload's annotations (Kueue's ``PriorityBoost``): pure.

        0 with the gate off, without the annotation, or with a value that is
        not an int32 (the webhook refuses those; as Kueue, the base priority
        is then used).
        """
        if not self._priority_boost:
            return 0
        try:
            boost = int(annotations.get(PRIORITY_BOOST_ANNOTATION, "0"), 10)
        except ValueError:
            return 0
        return boost if -(2**31) <= boost < 2**31 else 0

    # --- workloads --------------------------------------------------------------------

    def _apply_workload(self, workload: Workload) -> None:
        """Refresh the record from the API object, then count, route or finish it."""
        key = workload.key
        record = self._records.get(key)
        if record is None:
            record = self._records[key] = WorkloadRecord(key)
        else:
            self.queues.unindex(record)
        meta, spec = workload.metadata, workload.spec
        before = record.queue_signature()
        record.namespace = meta.namespace
        record.uid = meta.uid
        record.job_uid = meta.labels.get(JOB_UID_LABEL) or None
        record.queue_name = spec.queue_name or None
        ref = spec.priority_class_ref
        record.priority_ref = (
            (ref.kind or "WorkloadPriorityClass", ref.name)
            if ref is not None and ref.name
            else None
        )
        explicit = spec.priority
        record.boost = self._boost(meta.annotations)
        record.priority = record.boost + (
            explicit if explicit is not None else self._priority_of(record.priority_ref)
        )
        record.timestamp = queue_timestamp(workload, pods_ready_eviction=self._eviction_timestamp)
        record.pods_ready = workload.status.is_condition_true("PodsReady")
        record.pod_sets = pod_set_infos(workload, self.config.resources)
        record.active = spec.active
        held = workload.status.condition("QuotaReserved")
        record.on_hold = (
            held.message
            if held is not None and held.status == "False" and held.reason == "OnHold"
            else None
        )
        record.gate = (meta.annotations.get(GATE_ANNOTATION) or None) if self._gated_by else None
        record.replaces = meta.annotations.get(REPLACES_ANNOTATION) or None
        record.checks_failed = failed_admission_checks(workload)
        requeue = workload.status.requeue_state
        record.requeue_at = requeue.requeue_at if requeue is not None else None
        self.queues.index(record)
        if record.requeue_at is not None:
            self._backoff[key] = record.requeue_at
        if before[0] != record.pod_sets:
            record.scan = None  # another shape: the flavor scan starts afresh
        if is_finished(workload):
            self.finish(key)
            return
        if record.state == FINISHED:
            return
        if not record.active and holds_reservation(workload):
            # Deactivated while holding quota: it is being evicted, and its quota stays
            # counted until its status no longer records the reservation, which its job's
            # controller writes once the last pod has stopped
            # (docs/concepts.md#eviction-and-restore).
            self._admit_from_status(record, workload)
            if not record.evicted:
                record.evicted = True
                record.eviction_reason = "Deactivated"
                record.eviction_message = "The workload is deactivated"
            return
        if not record.active:
            self._release(record)
            record.state = PENDING
            record.admission = ()
            record.assumed = False
        elif holds_reservation(workload):
            self._admit_from_status(record, workload)
            return
        elif record.state == ADMITTED:
            if record.assumed:
                return  # admitted by this engine; the status write has not landed yet
            # The object no longer holds the reservation: whoever cleared it (an
            # eviction finished by another writer, a former leader) freed the quota.
            self._unreserve(record)
            self.queues.route(record, force_heap=True)
            return
        self.queues.route(record, force_heap=before != record.queue_signature())

    def _unreserve(self, record: WorkloadRecord) -> None:
        """Give back ``record``'s quota; it is pending again (routing is the caller's)."""
        evicted = record.evicted
        self._release(record)
        record.state = PENDING
        record.admission = ()
        record.evicted = False
        record.assumed = False
        record.awaiting_checks = False
        record.scan = None
        if evicted:
            record.set_status("PendingEvaluation", record.eviction_message)
        else:
            record.forget_status()

    def _admit_from_status(self, record: WorkloadRecord, workload: Workload) -> None:
        """Count a workload the API says holds quota (a restart, or our own write landing)."""
        reserved = reservation(workload)
        self.queues.unqueue(record)
        if record.state == ADMITTED:
            self._release(record)
        record.state = ADMITTED
        record.assumed = False
        record.cluster_queue = reserved.cluster_queue
        record.admission = reserved.pod_sets
        record.claims_freed = False
        # Not Admitted while admission checks are listed: they are not all Ready yet.
        record.awaiting_checks = bool(workload.status.admission_checks) and (
            not workload.status.is_condition_true("Admitted")
        )
        self.history.admitted(record.key)
        evicted = workload.status.condition("Evicted")
        if evicted is not None and evicted.status == "True" and not record.evicted:
            # Evicted before this engine saw it (a restart, another leader): not evicted twice.
            record.evicted = True
            record.eviction_reason = evicted.reason or "Preempted"
            record.eviction_message = evicted.message or ""
        self.cache.charge(
            record,
            reserved.cluster_queue,
            reserved.usage,
            reserved.reserved_at,
            recorded_charges(reserved.pod_sets, record.pod_sets, self.cache.topology),
        )


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
