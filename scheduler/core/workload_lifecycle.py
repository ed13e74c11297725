"""A workload's way through the engine: from its API object to quota and queues, and out.

See docs/scheduling.md#queues and docs/scheduling.md#eviction-and-requeue.  The
engine hands every Workload it is given to ``WorkloadLifecycle.apply``, which
refreshes the workload's record (one per key, shared by reference with the
queue manager and the cycle) and then counts it (its status holds a
reservation: a restart, or this engine's own write landing), routes it to its
queue, or finishes it.  The other steps of the way come from the adapters
through the engine: the evicted workload's pods are gone (``release``), it
completed (``finish``), it was deleted (``remove``), its admission's write
landed (``admission_recorded``).

Releasing quota is a requeue event for every cohort tree it was held in
(docs/scheduling.md#requeueing), and a workload leaving a tree forgets that
tree's preemptions (the loop guard of ``preemption.candidates``).  A pending
workload whose ``requeueState.requeueAt`` lies ahead is kept out of its queue
until then (``backoffs``, at the start of each cycle).  A priority class that
changes re-keys the workloads whose priority comes from it (``set_priority``).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from datetime import datetime

from scheduler.api.config import Configuration
from scheduler.api.feature_gates import enabled
from scheduler.api.models import Workload
from scheduler.api.pods_ready import wait_for_pods_ready
from scheduler.api.refs import ADMISSION_GATED_BY_ANNOTATION as GATE_ANNOTATION
from scheduler.api.refs import JOB_UID_LABEL
from scheduler.api.refs import WORKLOAD_SLICE_REPLACEMENT_ANNOTATION as REPLACES_ANNOTATION
from scheduler.core.decisions import WorkloadKey
from scheduler.core.preemption import PreemptionHistory
from scheduler.core.priorities import PriorityClasses, PriorityRef
from scheduler.core.queue_manager import QueueManager
from scheduler.core.quota_cache import QuotaCache
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


class WorkloadLifecycle:
    """The workload records, moved through quota and queues as their Workloads change."""

    def __init__(
        self,
        config: Configuration,
        *,
        records: MutableMapping[WorkloadKey, WorkloadRecord],
        cache: QuotaCache,
        queues: QueueManager,
        history: PreemptionHistory,
        priorities: PriorityClasses,
    ) -> None:
        self._config = config
        self._records = records
        self._cache = cache
        self._queues = queues
        self._history = history
        self._priorities = priorities
        self._gated_by = enabled(config.feature_gates, "AdmissionGatedBy")
        """The ``kueue.x-k8s.io/admission-gated-by`` annotation holds admission back."""
        pods_ready = wait_for_pods_ready(config)
        self._eviction_timestamp = (
            pods_ready is None or pods_ready.requeuing_strategy.timestamp == "Eviction"
        )
        """requeuingStrategy.timestamp: a PodsReady timeout orders by its eviction time."""
        self._backoff: dict[WorkloadKey, datetime] = {}
        """Pending workloads whose ``requeueState.requeueAt`` may lie ahead: kept out of
        their queue until then (``backoffs``)."""

    # --- the adapters' steps ------------------------------------------------------------

    def apply(self, workload: Workload) -> None:
        """Refresh the record from the API object, then count, route or finish it."""
        key = workload.key
        record = self._records.get(key)
        if record is None:
            record = self._records[key] = WorkloadRecord(key)
        else:
            self._queues.unindex(record)
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
        record.boost = self._priorities.boost(meta.annotations)
        record.priority = record.boost + (
            explicit if explicit is not None else self._priorities.value_of(record.priority_ref)
        )
        record.timestamp = queue_timestamp(workload, pods_ready_eviction=self._eviction_timestamp)
        record.pods_ready = workload.status.is_condition_true("PodsReady")
        record.pod_sets = pod_set_infos(workload, self._config.resources)
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
        self._queues.index(record)
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
            self._queues.route(record, force_heap=True)
            return
        self._queues.route(record, force_heap=before != record.queue_signature())

    def remove(self, workload: WorkloadKey) -> None:
        """The Workload was deleted: forget it, and give back what it held."""
        record = self._records.pop(workload, None)
        if record is not None:
            self._restart_history(record.cluster_queue)
            self._release(record)
            self._queues.pending.unqueue(record)
            self._queues.unindex(record)

    def release(self, workload: WorkloadKey) -> None:
        """The evicted workload's pods are gone: release its quota and requeue it.

        A workload that is not being evicted is left alone.
        """
        record = self._records.get(workload)
        if record is None or record.state != ADMITTED or not record.evicted:
            return
        self._unreserve(record)
        self._queues.route(record, force_heap=True)

    def admission_recorded(self, workload: WorkloadKey) -> None:
        """The Workload's status now records the admission this engine made."""
        record = self._records.get(workload)
        if record is not None:
            record.assumed = False

    def finish(self, workload: WorkloadKey) -> None:
        """The workload completed: release its quota (a requeue event) and drop it from queues."""
        record = self._records.get(workload)
        if record is None or record.state == FINISHED:
            return
        self._release(record)
        self._queues.pending.unqueue(record)
        record.state = FINISHED
        record.forget_status()
        self._restart_history(record.cluster_queue)

    # --- priorities and backoff ----------------------------------------------------------

    def set_priority(self, ref: PriorityRef, value: int | None) -> None:
        """A priority class changed (None: deleted); re-key the workloads that use it."""
        if not self._priorities.set(ref, value):
            return
        self._history.restart()  # who may preempt whom changed
        for record in self._queues.local_queues.with_priority_ref(ref):
            priority = self._priorities.value_of(ref) + record.boost
            if priority != record.priority:
                record.priority = priority
                self._queues.pending.requeue_one(record)

    def backoffs(self, now: datetime) -> None:
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
                self._queues.pending.unqueue(record)
            else:
                del self._backoff[key]
                if record.queued_in is None:  # held out until now: back in its queue
                    self._queues.route(record, force_heap=True)

    # --- quota -------------------------------------------------------------------------

    def _release(self, record: WorkloadRecord, *, recharging: bool = False) -> None:
        """Give back the quota ``record`` holds: a requeue event for every tree it held it in."""
        for cq in self._cache.release(record, recharging=recharging):
            self._queues.pending.requeue_tree(cq)

    def _restart_history(self, cluster_queue: str | None) -> None:
        """A workload of ``cluster_queue``'s cohort tree left: forget that tree's preemptions.

        Capacity came free without a preemption, so a preemption the loop
        guard barred may be the right one now.
        """
        if not self._history:
            return
        members = set(self._cache.tree.tree_members(cluster_queue)) if cluster_queue else set()

        def elsewhere(key: str) -> bool:
            record = self._records.get(key)
            return record is not None and record.cluster_queue not in members

        self._history.restart(elsewhere)

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
        self._queues.pending.unqueue(record)
        # Re-read while admitted: a terminating ClusterQueue it held quota in
        # must not be dropped between the release and the charge below.
        held_before = list(record.usage or ()) if record.state == ADMITTED else []
        if record.state == ADMITTED:
            self._release(record, recharging=True)
        record.state = ADMITTED
        record.assumed = False
        record.cluster_queue = reserved.cluster_queue
        record.admission = reserved.pod_sets
        record.claims_freed = False
        # Not Admitted while admission checks are listed: they are not all Ready yet.
        record.awaiting_checks = bool(workload.status.admission_checks) and (
            not workload.status.is_condition_true("Admitted")
        )
        self._history.admitted(record.key)
        evicted = workload.status.condition("Evicted")
        if evicted is not None and evicted.status == "True" and not record.evicted:
            # Evicted before this engine saw it (a restart, another leader): not evicted twice.
            record.evicted = True
            record.eviction_reason = evicted.reason or "Preempted"
            record.eviction_message = evicted.message or ""
        self._cache.charge(
            record,
            reserved.cluster_queue,
            reserved.usage,
            reserved.reserved_at,
            recorded_charges(reserved.pod_sets, record.pod_sets, self._cache.topology),
        )
        for cq in held_before:
            self._cache.drop_finished(cq)


__all__ = ["WorkloadLifecycle"]
