"""The scheduler's one picture of the cluster: informer events in, engine records and raw
objects for writes out.

Every kuota object arrives as raw JSON; it is defaulted and parsed by the API
layer exactly as the webhook and ``kuota simulate`` do, once per version, and
applied to the engine.  An object that does not parse is logged and skipped
(bad input never stops the scheduler).

Which cache owns what (one owner per fact; docs/architecture.md#status-adapters-and-the-service):

- **The engine** owns the scheduling view: the records of ResourceFlavors
  (node labels, taints, tolerations), priority values, namespaces, queues and
  Workloads.  The state keeps no copy of them: the Job controller reads a
  flavor's placement and the priority classes from the engine
  (:meth:`~scheduler.kube.cluster_settings.ClusterSettings.flavor_placements`,
  :meth:`~scheduler.kube.cluster_settings.ClusterSettings.classes`).
- **The state** keeps only what writes are computed from: the objects as
  stored (a status write is a diff of the stored status and carries its
  resourceVersion; a job is changed by a guarded patch of the job as read),
  the job <-> Workload index and the work lists of what to decide again.
  After a write the answer is stored at once
  (:meth:`ClusterState.remember`), so the next decision starts from it; a
  watch event still on its way with an older version does not put the older
  one back (:func:`scheduler.api.objects.is_older`).  Its parts keep the
  rest, each fed by its own watches: ``settings``
  (:mod:`scheduler.kube.cluster_settings`: Namespaces' labels, the names of
  the ``globalDefault`` PriorityClasses, and LimitRanges and RuntimeClasses
  as what they add to a Workload's requests, with which a Workload goes to
  the engine), ``pods`` (:mod:`scheduler.kube.pod_tracker`: the pods of
  started jobs, and those waiting for a replica group), ``topology``
  (:mod:`scheduler.kube.topology_state`) and ``stuck_pods``
  (:mod:`scheduler.kube.stuck_pods`).
- **The informers** keep their own store of every object, to diff a relist
  against and to rebuild from: when a term of leadership ends, the service
  replaces the engine and this state with fresh ones fed from those stores.

Jobs are keyed by UID; the objects of a kind with pod groups
(:class:`~scheduler.jobs.PodGroups`) that belong to a group are kept
together under the group's key, and the group is decided as one job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, cast

from scheduler.api import objects
from scheduler.api.feature_gates import enabled
from scheduler.api.field import ParseError
from scheduler.api.refs import (
    RESOURCE_IN_USE_FINALIZER,
    WORKLOAD_SLICE_NAME_ANNOTATION,
    KueueKind,
    workload_key,
)
from scheduler.core.engine import Engine
from scheduler.jobs import PodGroups, ReplicaGroups, capability, kinds_with, registry
from scheduler.jobs.elastic import Slices, choose_slices
from scheduler.jobs.propagation import orphaned
from scheduler.kube.child_jobs import ChildJobs
from scheduler.kube.cluster_settings import ClusterSettings
from scheduler.kube.informer import Event
from scheduler.kube.pod_tracker import PodTracker
from scheduler.kube.queue_changes import QUEUE_KINDS, QueueChanges
from scheduler.kube.referenced_objects import ReferencedObjects
from scheduler.kube.stuck_pods import StuckPods
from scheduler.kube.topology_state import TopologyState
from scheduler.kube.worklist import WorkList, stale

log = logging.getLogger("kuota.state")
KUEUE_KINDS: Final[tuple[KueueKind, ...]] = (
    "ResourceFlavor",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "Workload",
    "WorkloadPriorityClass",
    "AdmissionCheck",
    "Topology",
)
"""The kuota kinds the scheduler watches."""
STORED_KINDS: Final = (
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "ResourceFlavor",
    "AdmissionCheck",
    "Workload",
)
"""The kuota kinds kept as stored: their status or finalizers are written."""
MAX_OWNER_DEPTH: Final = 10
"""How far up the controller owners of a job the scheduler looks for a queued one."""


def _pod_groups() -> tuple[PodGroups, ...]:
    found = (capability(kind, PodGroups) for kind in kinds_with(PodGroups))
    return tuple(kind for kind in found if kind is not None)


def group_key_of(obj: Mapping[str, Any]) -> str | None:
    """The key of the group a job object belongs to (a pod of a pod group), if any: pure."""
    integration = registry.integration_for(obj)
    groups = capability(integration, PodGroups) if integration is not None else None
    return groups.group_key(obj) if groups is not None else None


class ClusterState:
    """The scheduler's picture of the cluster, fed by informers (see the module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._stored: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in STORED_KINDS}
        self._unfinished: set[str] = set()
        self._unfinished_by_queue: dict[str, set[str]] = {}
        """LocalQueue key -> the keys of its unfinished Workloads (for its status)."""
        self._queue_of: dict[str, str] = {}
        """Unfinished Workload key -> its LocalQueue key (a queue name can be edited)."""
        self.queue_changes = QueueChanges()
        """The queues whose status may have changed since the last refresh."""
        self._jobs: dict[str, dict[str, Any]] = {}  # uid -> job object
        self._groups: dict[str, dict[str, dict[str, Any]]] = {}  # group key -> uid -> member
        self._workloads_of_job: dict[str, set[str]] = {}  # job key -> its workloads' keys
        self._prebuilt: dict[str, str] = {}  # prebuilt workload key -> job uid
        self._owned: dict[str, set[str]] = {}
        """Owner UID -> keys of the Workloads it controls (a kind with replica groups has many)."""
        self.jobs_to_decide = WorkList()
        """Job (and group) keys whose controller decision may have changed."""
        self.workloads_to_check = WorkList()
        """Workloads whose admission-check states may call for a step (``kube.checks``)."""
        self.checks_to_sync = WorkList()
        """AdmissionChecks whose status kuota may have to set (``kube.checks``)."""
        self.workloads_to_time = WorkList()
        """Workloads whose timed deadlines may have moved (``kube.workload_timers``)."""
        self.workloads_to_expire = WorkList()
        """Workloads that changed or went, for the retention policies (``kube.retention``)."""
        self.workloads_orphaned = WorkList()
        """Workloads whose job is gone, to finish (``kube.orphans``)."""
        self.workloads_to_finalize = WorkList()
        """Workloads carrying resource-in-use, for ``kube.finalizers``."""
        self.settings = ClusterSettings(
            engine, jobs_to_decide=self.jobs_to_decide, apply_pending=self._apply_pending
        )
        """Namespaces, PriorityClasses, LimitRanges, RuntimeClasses, flavors' placements."""
        self.pods = PodTracker(self._jobs, jobs_to_decide=self.jobs_to_decide)
        self.children = ChildJobs(self._jobs)
        """Which jobs each job controls (a RayJob's RayCluster)."""
        self.references = ReferencedObjects(self._jobs)
        """The objects jobs name for their pod sets (a TrainJob's runtime)."""
        """The pods of started jobs, and those waiting for a replica group."""
        self.topology = TopologyState(engine)
        """Nodes and every Pod, for topology-aware scheduling."""
        self.stuck_pods = StuckPods(
            enabled=enabled(engine.config.feature_gates, "FailureRecoveryPolicy")
        )
        """Pods stuck terminating on unreachable nodes (``kube.failure_recovery``)."""
        self.workloads_to_place = self.topology.workloads_to_place
        """Workloads placed by topology whose gated pods may now get their domain."""

    # -- feeding: informer events -------------------------------------------------------

    def on_kueue(self, event: Event) -> None:
        obj, kind, key = event.object, str(event.object.get("kind", "")), event.key
        store = self._stored.get(kind)
        known = store.get(key) if store is not None else None
        if store is not None and stale(event, known):
            return
        if kind == "Workload":
            self.queue_changes.touch_workload(known)
            if event.type != "DELETED":
                self.queue_changes.touch_workload(obj)
        elif kind in QUEUE_KINDS:
            self.queue_changes.touch_queue_object(event.type, known, obj)
        else:
            self.queue_changes.touch_other_kind()
        if kind == "Workload":
            self._index_workload(event)
        elif kind == "ResourceFlavor":
            # A job waiting for this flavor can start now.
            self.jobs_to_decide.update(set(self._jobs) | set(self._groups))
        elif kind == "WorkloadPriorityClass":
            # A job whose class was not known yet can give its Workload that priority now.
            self.jobs_to_decide.update(set(self._jobs))
        elif kind == "AdmissionCheck" and event.type != "DELETED":
            self.checks_to_sync.add(key)
        elif kind == "ClusterQueue" and _spec_changed(store.get(key) if store else None, obj):
            # Its checks may have changed: the lists of its workloads are synced.
            name = objects.name(obj)
            self.workloads_to_check.update(
                [
                    workload_key
                    for workload_key, workload in self._stored["Workload"].items()
                    if objects.admission_check_states(workload)
                    and objects.admitted_cluster_queue(workload) == name
                ]
            )
        if store is not None and kind != "Workload":
            if event.type == "DELETED":
                store.pop(key, None)
            else:
                store[key] = dict(obj)
        if event.type == "DELETED" or (kind == "ClusterQueue" and objects.is_being_deleted(obj)):
            # A ClusterQueue being deleted is terminating (Kueue's rule): it admits
            # nothing new, and the engine forgets it once its last reservation is
            # released; applying it again would make it active.
            self.engine.remove(kind, objects.name(obj), objects.namespace(obj))
            return
        try:
            record = self.settings.engine_record(obj)
        except ParseError as bad:
            log.warning(
                "skipping an object that does not parse",
                extra={"object": f"{kind}/{key}", "error": str(bad)},
            )
            return
        self.engine.apply(record)

    def on_job(self, event: Event) -> None:
        """A job object, or a member of a group (kept with its group, decided as one)."""
        uid = objects.uid(event.object)
        if uid is None:
            return
        group = group_key_of(event.object)
        if group is not None:
            members = self._groups.setdefault(group, {})
            if stale(event, members.get(uid)):
                return
            if event.type == "DELETED":
                members.pop(uid, None)
                if not members:
                    del self._groups[group]
            else:
                members[uid] = dict(event.object)
            self.jobs_to_decide.add(group)
            return
        if stale(event, self._jobs.get(uid)):
            return
        if _replica_kind(event.object) is not None:
            self.pods.on_replica_owner(event, uid)
        prebuilt = objects.prebuilt_workload_name(event.object)
        prebuilt_key = workload_key(objects.namespace(event.object) or "", prebuilt or "")
        if event.type == "DELETED":
            self._jobs.pop(uid, None)
            if prebuilt and self._prebuilt.get(prebuilt_key) == uid:
                del self._prebuilt[prebuilt_key]
        else:
            self._jobs[uid] = dict(event.object)
            if prebuilt:
                self._prebuilt[prebuilt_key] = uid
            self.jobs_to_decide.add(uid)
        owner = self.children.on_job(uid, event.object, deleted=event.type == "DELETED")
        if owner is not None:
            self.jobs_to_decide.add(owner)  # its counts are this child's

    def managed_owner(self, job_key: str) -> dict[str, Any] | None:
        """The queued job this job was made by, walking controller owners up (ten at most).

        A RayJob's RayCluster, a TrainJob's JobSet carry their owner's labels,
        queue name included: they are left to their owner, which is queued
        instead (Kueue's rule for a job with a managed ancestor).  Only owners
        the scheduler watches count; one of a kind it does not manage leaves
        the child a job of its own.
        """
        current = self._jobs.get(job_key)
        for _ in range(MAX_OWNER_DEPTH):
            reference = objects.controller_reference(current) if current is not None else None
            if reference is None:
                return None
            parent = self._jobs.get(str(reference.get("uid") or ""))
            if parent is None:
                return None
            kind = registry.for_object(parent)
            if kind is not None and kind.queue_name(parent):
                return parent
            current = parent
        return None

    def owned_workloads(self, owner_uid: str) -> list[dict[str, Any]]:
        """The Workloads an object controls (by its owner reference), as stored."""
        workloads = self._stored["Workload"]
        return [
            workloads[key] for key in sorted(self._owned.get(owner_uid, ())) if key in workloads
        ]

    # -- what writes answered -------------------------------------------------------------

    def remember(self, obj: Mapping[str, Any]) -> None:
        """An object as a write of the scheduler stored it, unless the watch brought a later
        one: a Workload, a stored kuota kind, a job or a member of a group."""
        kind = str(obj.get("kind", ""))
        if kind in self._stored:
            key = objects.key(obj)
            known = self._stored[kind].get(key)
            if known is None or not objects.is_older(obj, known):
                if kind == "Workload":
                    self.queue_changes.touch_workload(known)
                    self.queue_changes.touch_workload(obj)
                    self._store_workload(key, obj)
                else:
                    self._stored[kind][key] = dict(obj)
            return
        uid = objects.uid(obj) or ""
        group = group_key_of(obj)
        store = self._groups.setdefault(group, {}) if group is not None else self._jobs
        known = store.get(uid)
        if known is None or not objects.is_older(obj, known):
            store[uid] = dict(obj)

    def forget(self, key: str) -> None:
        """Drop the engine's assumption about Workload ``key``; put back what the API server has.

        Only after a write that failed or replaced the Workload: the version
        stored then may be one the engine never applied (a write's answer).
        """
        namespace, name = key.split("/", 1)
        self.engine.remove("Workload", name, namespace)
        current = self._stored["Workload"].get(key)
        self.queue_changes.touch_workload(current)
        if current is None:
            return
        try:
            self.engine.apply(self.settings.engine_record(current))
        except ParseError:
            return

    # -- reads ------------------------------------------------------------------------------

    def stored(self, kind: str) -> Mapping[str, dict[str, Any]]:
        """The objects of a stored kuota kind by key, as stored (read-only use)."""
        return self._stored[kind]

    def unfinished_workloads(self) -> Iterator[dict[str, Any]]:
        """The stored Workloads without Finished=True (finished ones pile up until their owner
        deletes them; the queue statuses count only these)."""
        workloads = self._stored["Workload"]
        return (workloads[key] for key in self._unfinished)

    def unfinished_in_local_queue(self, queue_key: str) -> list[dict[str, Any]]:
        """The stored unfinished Workloads that name LocalQueue ``namespace/name``."""
        workloads = self._stored["Workload"]
        return [workloads[key] for key in self._unfinished_by_queue.get(queue_key, ())]

    def job(self, key: str) -> dict[str, Any] | None:
        return self._jobs.get(key)

    def group(self, key: str) -> list[dict[str, Any]]:
        """The members of a group, as stored."""
        return list(self._groups.get(key, {}).values())

    def counts(self) -> dict[str, int]:
        """How much is held (for logs)."""
        return {"workloads": len(self._stored["Workload"]), "jobs": len(self._jobs)}

    def workload_for(self, job_key: str) -> dict[str, Any] | None:
        """The job's Workload: the prebuilt one it names, else the one it owns."""
        workloads = self._stored["Workload"]
        job = self._jobs.get(job_key)
        prebuilt = objects.prebuilt_workload_name(job) if job is not None else None
        if job is not None and prebuilt:
            return workloads.get(workload_key(objects.namespace(job) or "", prebuilt))
        return cast("dict[str, Any] | None", self.slices_for(job_key).current)

    def slices_for(self, job_key: str) -> Slices:
        """The job's Workloads sorted out: the one deciding it, a new slice waiting, left-overs.

        Only an elastic job has more than one (docs/concepts.md#elastic-jobs).
        """
        workloads = self._stored["Workload"]
        keys = self._workloads_of_job.get(job_key, ())
        return choose_slices(workloads[key] for key in keys if key in workloads)

    def job_key_of(self, workload: Mapping[str, Any]) -> str | None:
        """The key the Workload's job is decided by: its group's key, its owner job's UID,
        else the UID of a job that names it prebuilt."""
        for groups in _pod_groups():
            group = groups.group_key_of_workload(workload)
            if group:
                return group  # a group's, even when its owner's UID labels it
        owner = objects.owner_job_uid(workload)
        if owner:
            return owner
        return self._prebuilt.get(objects.key(workload))

    # -- inside ------------------------------------------------------------------------------

    def _index_workload(self, event: Event) -> None:
        job_key = self.job_key_of(event.object)
        key = event.key
        self.workloads_to_expire.add(key)
        controller = objects.controller_reference(event.object)
        if controller is not None and _replica_kind(controller) is not None:
            # A replica's Workload: its owner decides whether it should exist.
            owner = str(controller.get("uid") or "")
            if event.type == "DELETED":
                owned = self._owned.get(owner, set())
                owned.discard(key)
                if not owned:
                    self._owned.pop(owner, None)
            else:
                self._owned.setdefault(owner, set()).add(key)
            self.jobs_to_decide.add(owner)
        if event.type == "DELETED":
            self._stored["Workload"].pop(key, None)
            self._count_unfinished(key, None)
            self.workloads_to_time.add(key)
            of_job = self._workloads_of_job.get(job_key or "")
            if of_job is not None:
                of_job.discard(key)
                if not of_job:
                    del self._workloads_of_job[job_key or ""]
        else:
            self._store_workload(key, event.object)  # not stale: on_kueue checked
            if objects.admission_check_states(event.object):
                self.workloads_to_check.add(key)
            if self.topology.has_pods(key):
                self.workloads_to_place.add(key)
            origin = objects.annotation(event.object, WORKLOAD_SLICE_NAME_ANNOTATION)
            origin_key = workload_key(objects.namespace(event.object) or "", origin or "")
            if origin and origin_key != key and self.topology.has_pods(origin_key):
                # A new slice of an elastic job: its pods are marked with the first one's name.
                self.workloads_to_place.add(origin_key)
            if orphaned(event.object):
                self.workloads_orphaned.add(key)
            if RESOURCE_IN_USE_FINALIZER in (
                objects.metadata(event.object).get("finalizers") or []
            ):
                self.workloads_to_finalize.add(key)
            if job_key:
                self._workloads_of_job.setdefault(job_key, set()).add(key)
        if job_key:
            self.jobs_to_decide.add(job_key)

    def _apply_pending(
        self, concerned: Callable[[Mapping[str, Any]], bool], namespace: str | None
    ) -> None:
        """Apply again the unfinished Workloads without quota that ``concerned`` picks, of
        ``namespace`` when given (Kueue requeues the pending ones when a LimitRange or
        RuntimeClass changes)."""
        self.queue_changes.touch_everything()
        workloads = self._stored["Workload"]
        prefix = f"{namespace}/" if namespace is not None else ""
        for key in sorted(k for k in self._unfinished if k.startswith(prefix)):
            workload = workloads[key]
            if objects.has_quota_reservation(workload) or not concerned(workload):
                continue
            try:
                self.engine.apply(self.settings.engine_record(workload))
            except ParseError:
                continue

    def _store_workload(self, key: str, workload: Mapping[str, Any]) -> None:
        self._stored["Workload"][key] = dict(workload)
        self.workloads_to_time.add(key)
        self._count_unfinished(key, None if objects.is_finished(workload) else workload)

    def _count_unfinished(self, key: str, unfinished: Mapping[str, Any] | None) -> None:
        """Workload ``key`` is ``unfinished`` now, or finished or gone (None): the indexes."""
        previous = self._queue_of.pop(key, None)
        if previous is not None:
            keys = self._unfinished_by_queue.get(previous)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._unfinished_by_queue[previous]
        if unfinished is None:
            self._unfinished.discard(key)
            return
        self._unfinished.add(key)
        queue_name = objects.workload_queue_name(unfinished)
        if queue_name:
            queue = f"{objects.namespace(unfinished)}/{queue_name}"
            self._queue_of[key] = queue
            self._unfinished_by_queue.setdefault(queue, set()).add(key)


def _spec_changed(known: Mapping[str, Any] | None, incoming: Mapping[str, Any]) -> bool:
    """A new generation of an object already known (not a status write, not the first list)."""
    return known is not None and objects.generation(known) != objects.generation(incoming)


def _replica_kind(obj: Mapping[str, Any]) -> ReplicaGroups | None:
    integration = registry.integration_for(obj)
    return capability(integration, ReplicaGroups) if integration is not None else None
