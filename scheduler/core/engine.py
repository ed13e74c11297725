"""The scheduling engine: kuota's single source of scheduling truth (engine contract).

The live scheduler, ``kuota simulate`` and the tests all drive this class.  It
is pure and synchronous: objects come in through ``apply``/``remove``/
``finish``, decisions come out of ``cycle(now)``, and ``now`` is the only
clock.  Inside, the API objects are reduced to the engine's own records
(``ClusterQueueInfo``, ``WorkloadRecord``), the cohort forest keeps quota and
usage per node, and every ClusterQueue has a heap plus an inadmissible set.

Events follow scheduling.md 3.7: anything that may free capacity or change
what a queue can admit marks a requeue of the affected trees, executed at
the start of the next cycle (Kueue batches them for a second; a cycle is
kuota's batch).  The cycle itself lives in ``scheduler.core.cycle``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from typing import Literal, Union

from scheduler.api.config import Configuration
from scheduler.api.models import (
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    FairSharing,
    LocalQueue,
    ResourceFlavor,
    ResourceFlavorSpec,
    Workload,
    WorkloadPriorityClass,
)
from scheduler.api.quantity import Quantity
from scheduler.core import cycle as cycle_module
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.decisions import CycleResult, PodSetAdmission, WorkloadKey
from scheduler.core.hierarchy import CohortSpecInfo, Forest, NodeQuota, build_forest, quota_of
from scheduler.core.node_matching import selector_matches
from scheduler.core.pending_reasons import Blocker, Shortage
from scheduler.core.preemption.fair import DEFAULT_STRATEGIES
from scheduler.core.queues import ClusterQueueQueue
from scheduler.core.resource_node import add_usage, remove_usage
from scheduler.core.resources import FRValues, to_quantity
from scheduler.core.routing import Router
from scheduler.core.state import ADMITTED, FINISHED, PENDING, WorkloadRecord, inactive_message
from scheduler.core.workload import (
    admitted_usage,
    failed_admission_checks,
    holds_reservation,
    is_finished,
    pod_set_infos,
    queue_timestamp,
)

GATE_ANNOTATION = "kueue.x-k8s.io/admission-gated-by"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def _weight(fair_sharing: FairSharing | None) -> Fraction:
    """``spec.fairSharing.weight`` as an exact fraction (default 1, 8.1): pure."""
    if fair_sharing is None:
        return Fraction(1)
    return Fraction(fair_sharing.weight.as_decimal())


@dataclass(frozen=True, slots=True)
class PriorityClassInfo:
    """A ``scheduling.k8s.io/v1`` PriorityClass."""

    name: str
    value: int
    global_default: bool = False


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    """A v1 Namespace; its labels feed ``namespaceSelector``."""

    name: str
    labels: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class WorkloadState:
    key: WorkloadKey
    state: Literal["Admitted", "Pending", "Finished"]
    cluster_queue: str | None
    admission: tuple[PodSetAdmission, ...]
    reason: str | None
    message: str
    evictions: int
    shortages: tuple[Shortage, ...] = ()
    """Pending: what would have to free up, per flavor and resource (as in ``Pending``)."""
    blockers: tuple[Blocker, ...] = ()
    """Pending: what no release of quota cures (as in ``Pending``)."""
    local_queue: str | None = None
    """The LocalQueue it was submitted to (``spec.queueName``)."""


@dataclass(frozen=True, slots=True)
class ClusterQueueStatus:
    name: str
    pending: int
    admitted: int
    usage: Mapping[str, Mapping[str, Quantity]]
    borrowed: Mapping[str, Mapping[str, Quantity]]
    active: bool
    active_reason: str
    active_message: str


EngineObject = Union[
    ResourceFlavor,
    ClusterQueue,
    Cohort,
    LocalQueue,
    Workload,
    WorkloadPriorityClass,
    AdmissionCheck,
    PriorityClassInfo,
    NamespaceInfo,
]


class Engine(Router):
    """Queues, quota and the scheduling cycle (see the module docstring)."""

    def __init__(
        self,
        config: Configuration | None = None,
        *,
        one_admission_per_queue: bool = False,
        resume_flavor_scan: bool = True,
    ) -> None:
        super().__init__()
        self.config = config or Configuration()
        self.one_admission_per_queue = one_admission_per_queue
        self.resume_flavor_scan = resume_flavor_scan
        """4.8: resume a flavor scan after the last examined flavor (off: always start at the first)."""
        resources = self.config.resources
        self.resources_config = resources
        self.ignore_undeclared = (
            resources is not None and resources.quota_check_strategy == "IgnoreUndeclared"
        )
        self.fair_sharing = self.config.fair_sharing is not None and getattr(
            self.config.fair_sharing, "enable", True
        )
        self.flavors: dict[str, ResourceFlavorSpec] = {}
        self.cluster_queues: dict[str, ClusterQueueInfo] = {}
        self.cq_quota: dict[str, NodeQuota] = {}
        self.terminating: set[str] = set()
        self.cohort_specs: dict[str, CohortSpecInfo] = {}
        self.admission_checks: set[str] = set()
        self.workload_priority_classes: dict[str, int] = {}
        self.priority_classes: dict[str, int] = {}
        self.namespaces: dict[str, Mapping[str, str]] = {}
        self.workloads: dict[str, WorkloadRecord] = {}
        self.cq_usage: dict[str, FRValues] = {}
        self.cq_admitted: dict[str, set[str]] = {}
        self.forest = Forest()
        self.forest_dirty = True
        self.requeue_trees: set[str] = set()
        self.requeue_cqs: set[str] = set()
        self.strategies: tuple[str, ...] = (
            tuple(getattr(self.config.fair_sharing, "preemption_strategies", ()) or ())
            or DEFAULT_STRATEGIES
        )
        self.cohort_weights: dict[str, Fraction] = {}
        self.cycles = 0
        """Cycles run so far (the flavor-scan position's age, 4.8)."""
        self.quota_generation = 0
        self.cq_generation: dict[str, int] = {}
        """Bumped when a reserving workload leaves the CQ (4.8 allocatable generation)."""
        self.reservations = 0

    # --- state: upserts and removals ---------------------------------------

    def apply(self, obj: EngineObject) -> None:
        """Insert or update one object (idempotent)."""
        if isinstance(obj, Workload):
            self._apply_workload(obj)
        elif isinstance(obj, ClusterQueue):
            self._apply_cluster_queue(obj)
        elif isinstance(obj, LocalQueue):
            key = f"{obj.metadata.namespace}/{obj.name}"
            self.local_queues[key] = (str(obj.spec.cluster_queue or ""), obj.spec.stop_policy)
            self.reroute_local_queue(key)
        elif isinstance(obj, ResourceFlavor):
            old = self.flavors.get(obj.name)
            self.flavors[obj.name] = obj.spec
            if old != obj.spec:
                self._flavor_changed(obj.name)
        elif isinstance(obj, Cohort):
            parent = str(obj.spec.parent_name) if obj.spec.parent_name else None
            self.cohort_specs[obj.name] = CohortSpecInfo(parent, quota_of(obj.spec.resource_groups))
            self.cohort_weights[obj.name] = _weight(obj.spec.fair_sharing)
            self.forest_dirty = True
            self.requeue_trees.add(obj.name)
        elif isinstance(obj, WorkloadPriorityClass):
            self.workload_priority_classes[obj.name] = obj.value or 0
            self._priority_class_changed(("WorkloadPriorityClass", obj.name))
        elif isinstance(obj, PriorityClassInfo):
            self.priority_classes[obj.name] = obj.value
            self._priority_class_changed(("PriorityClass", obj.name))
        elif isinstance(obj, NamespaceInfo):
            self._apply_namespace(obj.name, dict(obj.labels))
        elif isinstance(obj, AdmissionCheck):
            if obj.name not in self.admission_checks:
                self.admission_checks.add(obj.name)
                self._checks_changed()
        else:
            raise TypeError(f"the engine does not handle {type(obj).__name__}")

    def remove(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Forget one object; removing something unknown is a no-op."""
        if kind == "Workload":
            key = f"{namespace or ''}/{name}"
            record = self.workloads.pop(key, None)
            if record is not None:
                self._release(record)
                self.unqueue(record)
                self.index_remove(record)
        elif kind == "ClusterQueue":
            if name in self.cluster_queues:
                self.requeue_trees.add(name)
                if self.cq_admitted.get(name):
                    self.terminating.add(name)
                else:
                    self._drop_cluster_queue(name)
                self.reroute_cluster_queue(name)
        elif kind == "LocalQueue":
            key = f"{namespace or ''}/{name}"
            if self.local_queues.pop(key, None) is not None:
                self.reroute_local_queue(key)
        elif kind == "ResourceFlavor":
            if self.flavors.pop(name, None) is not None:
                self._flavor_changed(name)
        elif kind == "Cohort":
            if self.cohort_specs.pop(name, None) is not None:
                self.forest_dirty = True
                self.requeue_trees.add(name)
        elif kind == "WorkloadPriorityClass":
            if self.workload_priority_classes.pop(name, None) is not None:
                self._priority_class_changed(("WorkloadPriorityClass", name))
        elif kind == "PriorityClass":
            if self.priority_classes.pop(name, None) is not None:
                self._priority_class_changed(("PriorityClass", name))
        elif kind == "Namespace":
            self._apply_namespace(name, None)
        elif kind == "AdmissionCheck":
            if name in self.admission_checks:
                self.admission_checks.discard(name)
                self._checks_changed()

    def release(self, workload: WorkloadKey) -> None:
        """The evicted workload's pods are gone: release its quota and requeue it (6.4 step 3, 7.8).

        Until this call a victim keeps its quota counted (and is not evicted
        twice), so released quota is never counted twice.  A workload that is
        not being evicted is left alone.
        """
        record = self.workloads.get(workload)
        if record is None or record.state != ADMITTED or not record.evicted:
            return
        self._release(record)
        record.state = PENDING
        record.admission = ()
        record.evicted = False
        record.scan = None
        record.set_status("PendingEvaluation", record.eviction_message)
        self.route(record, force_heap=True)

    def allocatable_generation(self, cq: str) -> int:
        """Changes when quota may have been freed or changed for ``cq`` (4.8): pure."""
        return self.quota_generation + self.cq_generation.get(cq, 0)

    def finish(self, workload: WorkloadKey) -> None:
        """The workload completed: release its quota (a requeue event for its tree) and drop it from queues."""
        record = self.workloads.get(workload)
        if record is None or record.state == FINISHED:
            return
        self._release(record)
        self.unqueue(record)
        record.state = FINISHED
        record.reason, record.message, record.shortages, record.blockers = None, "", (), ()

    # --- scheduling -----------------------------------------------------------

    def cycle(self, now: datetime) -> CycleResult:
        """One scheduling cycle (scheduling.md 4)."""
        result, _ = cycle_module.run_cycle(self, now)
        return result

    def run_until_steady(
        self,
        now: datetime,
        *,
        max_cycles: int = 10_000,
        after_cycle: Callable[[CycleResult], None] | None = None,
    ) -> tuple[list[CycleResult], bool]:
        """Cycle until a cycle changes nothing (no admission, eviction or queue move); (results, reached).

        ``after_cycle`` runs after every cycle with its result (``kuota
        simulate`` releases every victim there: a simulation has no pods).
        """
        results: list[CycleResult] = []
        for _ in range(max_cycles):
            result, changed = cycle_module.run_cycle(self, now)
            results.append(result)
            if after_cycle is not None:
                after_cycle(result)
            if not changed:
                return results, True
        return results, False

    # --- reading state --------------------------------------------------------

    def workload_state(self, workload: WorkloadKey) -> WorkloadState:
        """What the workload's conditions say now (state, reason, message and their structure)."""
        record = self.workloads.get(workload)
        if record is None:
            raise KeyError(workload)
        state: Literal["Admitted", "Pending", "Finished"]
        admission, reason, message = record.admission, record.reason, record.message
        shortages: tuple[Shortage, ...] = ()
        blockers: tuple[Blocker, ...] = ()
        if record.state == ADMITTED:
            state = "Admitted"
            if record.evicted:
                reason, message = "Preempted", record.eviction_message
            else:
                reason = "QuotaReserved"
                message = f"Quota reserved in ClusterQueue {record.cluster_queue}"
        elif record.state == FINISHED:
            state, reason, message = "Finished", None, ""
        else:
            state, admission = "Pending", ()
            pending = self.pending_status(record)
            reason, message = (None, "") if pending is None else (pending.reason, pending.message)
            if pending is not None:
                shortages, blockers = pending.shortages, pending.blockers
        return WorkloadState(
            key=workload,
            state=state,
            cluster_queue=record.cluster_queue,
            admission=admission,
            reason=reason,
            message=message,
            evictions=record.evictions,
            shortages=shortages,
            blockers=blockers,
            local_queue=record.queue_name,
        )

    def has_workload(self, workload: WorkloadKey) -> bool:
        """Whether the engine knows the workload (in any state): pure."""
        return workload in self.workloads

    def queue_position(self, workload: WorkloadKey) -> tuple[int, int] | None:
        """(1-based position, pending count) in its ClusterQueue's queue order; None if not queued.

        Queue order is 3.4's (priority, then age, ``WorkloadRecord.queue_order``)
        over every pending workload of the queue, active and inadmissible.  Pure.
        """
        record = self.workloads.get(workload)
        queue = self.queues.get(record.cluster_queue or "") if record is not None else None
        if queue is None or workload not in queue:
            return None
        ordered = sorted(queue.keys(), key=lambda key: self.workloads[key].queue_order())
        return ordered.index(workload) + 1, len(ordered)

    def cluster_queue_status(self, name: str) -> ClusterQueueStatus:
        info = self.cluster_queues.get(name)
        if info is None:
            raise KeyError(name)
        self.ensure_forest()
        usage = self.cq_usage.get(name, {})
        quota = self.cq_quota[name]
        used: dict[str, dict[str, Quantity]] = {}
        lent: dict[str, dict[str, Quantity]] = {}
        for group in info.groups:
            for flavor in group.flavors:
                for resource in sorted(group.covered):
                    amount = usage.get((flavor, resource), 0)
                    over = (
                        max(0, amount - quota.nominal.get((flavor, resource), 0))
                        if info.cohort
                        else 0
                    )
                    used.setdefault(flavor, {})[resource] = to_quantity(resource, amount)
                    lent.setdefault(flavor, {})[resource] = to_quantity(resource, over)
        reason, message = inactive_message(self.inactive_reasons(name))
        queue = self.queues.get(name)
        return ClusterQueueStatus(
            name=name,
            pending=len(queue) if queue is not None else 0,
            admitted=len(self.cq_admitted.get(name, ())),
            usage=used,
            borrowed=lent,
            active=reason == "Ready",
            active_reason=reason,
            active_message=message,
        )

    def workload_keys(self) -> tuple[WorkloadKey, ...]:
        return tuple(sorted(self.workloads))

    def cluster_queue_names(self) -> tuple[str, ...]:
        return tuple(sorted(self.cluster_queues))

    # --- internals used by routing and the cycle --------------------------------

    def inactive_reasons(self, name: str) -> list[tuple[str, str]]:
        """(reason, fragment) pairs that make the CQ inactive, in 3.11 order: pure."""
        info = self.cluster_queues.get(name)
        if info is None:
            return [("ClusterQueueDoesNotExist", "does not exist")]
        if name in self.terminating:
            return [("Terminating", "is terminating")]
        fragments: list[tuple[str, str]] = []
        if info.stop_policy != "None":
            fragments.append(("Stopped", "is stopped"))
        missing = [
            flavor for flavor in dict.fromkeys(info.flavor_names) if flavor not in self.flavors
        ]
        if missing:
            fragments.append(
                ("FlavorNotFound", f"references missing ResourceFlavor(s): {','.join(missing)}")
            )
        checks = [
            check
            for check in dict.fromkeys(info.admission_checks)
            if check not in self.admission_checks
        ]
        if checks:
            fragments.append(
                (
                    "AdmissionCheckNotFound",
                    f"references missing AdmissionCheck(s): {','.join(checks)}",
                )
            )
        return fragments

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """Labels of a Namespace; one never applied is assumed to exist with its automatic name label."""
        labels = self.namespaces.get(namespace)
        return labels if labels is not None else {"kubernetes.io/metadata.name": namespace}

    def namespace_matches(self, info: ClusterQueueInfo, namespace: str) -> bool:
        return selector_matches(info.namespace_selector, self.namespace_labels(namespace))

    def ensure_forest(self) -> None:
        """Rebuild the cohort forest if quotas or structure changed (usage comes from ``cq_usage``)."""
        if not self.forest_dirty:
            return
        specs = {
            name: (info.cohort, self.cq_quota[name]) for name, info in self.cluster_queues.items()
        }
        self.forest = build_forest(
            cluster_queues=specs, cohorts=self.cohort_specs, usage=self.cq_usage
        )
        for name, info in self.cluster_queues.items():
            info.node = self.forest.cluster_queues[name]
            info.node.weight = info.weight
        for name, weight in self.cohort_weights.items():
            node = self.forest.cohorts.get(name)
            if node is not None:
                node.weight = weight
        self.forest_dirty = False
        self.quota_generation += 1

    def tree_members(self, name: str) -> list[str]:
        """Names of every CQ in the tree of CQ or cohort ``name`` (sorted): pure."""
        node = self.forest.cluster_queues.get(name) or self.forest.cohorts.get(name)
        if node is None:
            return []
        stack, members = [node.root()], []
        while stack:
            current = stack.pop()
            if current.is_cohort:
                stack.extend(current.children)
            else:
                members.append(current.name)
        return sorted(members)

    def charge(
        self, record: WorkloadRecord, cq: str, usage: FRValues, reserved_at: datetime | None = None
    ) -> None:
        """Record ``usage`` of an admitted ``record`` against ``cq`` (cache and tree)."""
        self.reservations += 1
        record.reserved_at = (reserved_at or _EARLIEST, self.reservations)
        record.usage = {cq: usage}
        totals = self.cq_usage.setdefault(cq, {})
        for fr, amount in usage.items():
            totals[fr] = totals.get(fr, 0) + amount
        self.cq_admitted.setdefault(cq, set()).add(record.key)
        info = self.cluster_queues.get(cq)
        if info is not None and info.node is not None and not self.forest_dirty:
            for fr, amount in usage.items():
                add_usage(info.node, fr, amount)

    def _release(self, record: WorkloadRecord) -> None:
        """Give back the quota ``record`` holds; a requeue event for its tree (3.7)."""
        if record.state != ADMITTED or not record.usage:
            return
        for cq, usage in record.usage.items():
            totals = self.cq_usage.get(cq, {})
            for fr, amount in usage.items():
                totals[fr] = totals.get(fr, 0) - amount
            self.cq_admitted.get(cq, set()).discard(record.key)
            info = self.cluster_queues.get(cq)
            if info is not None and info.node is not None and not self.forest_dirty:
                for fr, amount in usage.items():
                    remove_usage(info.node, fr, amount)
            self.requeue_trees.add(cq)
            self.cq_generation[cq] = self.cq_generation.get(cq, 0) + 1
            if cq in self.terminating and not self.cq_admitted.get(cq):
                self._drop_cluster_queue(cq)
        record.usage = None

    # --- per-kind handlers ------------------------------------------------------

    def _apply_cluster_queue(self, cq: ClusterQueue) -> None:
        name = cq.name
        info = ClusterQueueInfo(cq)
        self.cluster_queues[name] = info
        self.cq_quota[name] = quota_of(cq.spec.resource_groups)
        self.terminating.discard(name)
        self.queues.setdefault(name, ClusterQueueQueue())
        self.forest_dirty = True
        self.requeue_trees.add(name)
        self.reroute_cluster_queue(name)

    def _drop_cluster_queue(self, name: str) -> None:
        self.cluster_queues.pop(name, None)
        self.cq_quota.pop(name, None)
        self.terminating.discard(name)
        self.forest_dirty = True

    def _flavor_changed(self, flavor: str) -> None:
        for name, info in self.cluster_queues.items():
            if flavor in info.flavor_names:
                self.requeue_cqs.add(name)
                self.reroute_cluster_queue(name)

    def _checks_changed(self) -> None:
        for name, info in self.cluster_queues.items():
            if info.admission_checks:
                self.requeue_cqs.add(name)
                self.reroute_cluster_queue(name)

    def _apply_namespace(self, namespace: str, labels: dict[str, str] | None) -> None:
        old = self.namespace_labels(namespace)
        if labels is None:
            self.namespaces.pop(namespace, None)
        else:
            self.namespaces[namespace] = labels
        new = self.namespace_labels(namespace)
        for name, info in self.cluster_queues.items():
            if not selector_matches(info.namespace_selector, old) and selector_matches(
                info.namespace_selector, new
            ):
                self.requeue_cqs.add(name)

    def _priority_class_changed(self, ref: tuple[str, str]) -> None:
        for key in list(self.by_priority_ref.get(ref, ())):
            record = self.workloads[key]
            priority = self._resolve_priority(None, ref)
            if priority != record.priority:
                record.priority = priority
                self.requeue_one(record)

    def _resolve_priority(self, explicit: int | None, ref: tuple[str, str] | None) -> int:
        if explicit is not None:
            return explicit
        if ref is None:
            return 0
        kind, name = ref
        table = self.priority_classes if kind == "PriorityClass" else self.workload_priority_classes
        return table.get(name, 0)

    def _apply_workload(self, workload: Workload) -> None:
        key = workload.key
        record = self.workloads.get(key)
        if record is None:
            record = WorkloadRecord(key)
            self.workloads[key] = record
        else:
            self.index_remove(record)
        meta = workload.metadata
        ref = workload.spec.priority_class_ref
        before = (
            record.pod_sets,
            record.priority,
            record.queue_name,
            record.active,
            record.timestamp,
        )
        record.namespace = meta.namespace
        record.uid = meta.uid
        record.job_uid = meta.labels.get(JOB_UID_LABEL) or None
        record.queue_name = workload.spec.queue_name or None
        record.priority_ref = (
            (ref.kind or "WorkloadPriorityClass", ref.name)
            if ref is not None and ref.name
            else None
        )
        record.priority = self._resolve_priority(workload.spec.priority, record.priority_ref)
        record.timestamp = queue_timestamp(workload)
        record.pod_sets = pod_set_infos(workload, self.resources_config)
        record.active = workload.spec.active
        record.gate = meta.annotations.get(GATE_ANNOTATION) or None
        record.checks_failed = failed_admission_checks(workload)
        record.requeue_at = (
            workload.status.requeue_state.requeue_at if workload.status.requeue_state else None
        )
        self.index_add(record)
        if before[0] != record.pod_sets:
            record.scan = None
        if is_finished(workload):
            self.finish(key)
            return
        if record.state == FINISHED:
            return
        if not record.active:
            self._release(record)
            record.state = PENDING
            record.admission = ()
        elif holds_reservation(workload):
            self._admit_from_status(record, workload)
            return
        elif record.state == ADMITTED:
            return  # assumed by the engine; the status write has not landed yet
        changed = before != (
            record.pod_sets,
            record.priority,
            record.queue_name,
            record.active,
            record.timestamp,
        )
        self.route(record, force_heap=changed)

    def _admit_from_status(self, record: WorkloadRecord, workload: Workload) -> None:
        admission = workload.status.admission
        assert admission is not None
        self.unqueue(record)
        if record.state == ADMITTED:
            self._release(record)
        cq = str(admission.cluster_queue)
        usage: FRValues = {}
        pod_sets = []
        for name, count, flavors, amounts in admitted_usage(workload):
            for resource, amount in amounts.items():
                flavor = flavors.get(resource)
                if flavor is not None:
                    usage[(flavor, resource)] = usage.get((flavor, resource), 0) + amount
            pod_sets.append(
                PodSetAdmission(
                    name=name,
                    count=count,
                    flavors=dict(flavors),
                    resource_usage={r: to_quantity(r, a) for r, a in amounts.items()},
                )
            )
        record.state = ADMITTED
        record.cluster_queue = cq
        record.admission = tuple(pod_sets)
        condition = workload.status.condition("QuotaReserved")
        self.charge(
            record, cq, usage, condition.last_transition_time if condition is not None else None
        )


__all__ = ["ClusterQueueStatus", "Engine", "NamespaceInfo", "PriorityClassInfo", "WorkloadState"]
