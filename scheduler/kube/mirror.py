"""Routing informer events into the engine, and the raw objects the executor writes from.

Every kuota object arrives as raw JSON; it is defaulted and parsed by the API
layer exactly as the webhook and ``kuota simulate`` do, then applied to the
engine.  An object that does not parse is logged and skipped (bad input never
stops the scheduler).

Which cache owns what (one owner per fact):

- **The engine** owns the scheduling view: ResourceFlavors (node labels,
  taints, tolerations), PriorityClass and WorkloadPriorityClass values,
  namespaces, queues and the Workloads' records.  The mirror keeps no copy
  of flavors or priority values: the Job controller reads a flavor's node
  labels and tolerations (:meth:`Mirror.flavor_placements`) and the priority
  classes (:meth:`Mirror.classes`) from the engine, through these two
  methods only.
- **The mirror** owns what the engine does not hold: the raw objects that
  writes are computed from (a status patch is a diff against the stored
  object and carries its resourceVersion), so Workloads, Jobs, ClusterQueues,
  LocalQueues and ResourceFlavors as stored (whose finalizers
  :mod:`scheduler.kube.finalizers` removes); the Job <-> Workload index; the set of
  Jobs to reconcile; and the names of the ``globalDefault`` PriorityClasses (the
  engine keeps values, not that flag).  After a write the executor stores
  the answer here at once, so the next decision starts from it without
  waiting for the watch; a watch event still on its way with an older
  version of that object does not put it back (:func:`scheduler.api.objects.is_older`).
- **The informers** keep their own store of every object, to diff a relist
  against (vanished objects become deletions) and to rebuild from: when a
  term of leadership ends, the service replaces the engine and this mirror
  with fresh ones fed from those stores (:meth:`scheduler.service.loop.Scheduler.rebuild`);
  nothing else reads them.

Jobs are indexed by UID and Workloads by the UID of the Job that owns them
(:func:`scheduler.api.objects.owner_job_uid`), so the Job reconciler finds
the pair in O(1); every change marks the affected Job dirty.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.defaults import apply_schema_defaults
from scheduler.api.field import ParseError
from scheduler.api.models import ResourceFlavorSpec, Toleration
from scheduler.api.parse import parse_object
from scheduler.api.refs import KueueKind, workload_key
from scheduler.core.engine import Engine, NamespaceInfo, PriorityClassInfo
from scheduler.jobs.controller import FlavorPlacement
from scheduler.jobs.pod.group import group_key_of_pod, group_key_of_workload
from scheduler.jobs.workload_from_job import PriorityClasses
from scheduler.kube.informer import Event

log = logging.getLogger("kuota.mirror")
KUEUE_KINDS: Final[tuple[KueueKind, ...]] = (
    "ResourceFlavor",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "Workload",
    "WorkloadPriorityClass",
    "AdmissionCheck",
)
"""The kuota kinds the scheduler watches."""


def toleration_json(toleration: Toleration) -> dict[str, Any]:
    """A toleration as the API serializes it (empty fields omitted): pure."""
    raw: dict[str, Any] = {}
    if toleration.key:
        raw["key"] = toleration.key
    if toleration.operator:
        raw["operator"] = toleration.operator
    if toleration.value:
        raw["value"] = toleration.value
    if toleration.effect:
        raw["effect"] = toleration.effect
    if toleration.toleration_seconds is not None:
        raw["tolerationSeconds"] = toleration.toleration_seconds
    return raw


def flavor_placement(spec: ResourceFlavorSpec) -> FlavorPlacement:
    """What a Job started on this flavor receives: its node labels and tolerations: pure."""
    return FlavorPlacement(
        node_labels=dict(spec.node_labels),
        tolerations=tuple(toleration_json(t) for t in spec.tolerations),
    )


class _FlavorPlacements(Mapping[str, FlavorPlacement]):
    """A read-only view of the engine's flavors as placements (converted on access)."""

    def __init__(self, flavors: Mapping[str, ResourceFlavorSpec]) -> None:
        self._flavors = flavors

    def __getitem__(self, name: str) -> FlavorPlacement:
        return flavor_placement(self._flavors[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._flavors)

    def __len__(self) -> int:
        return len(self._flavors)


class Mirror:
    """The scheduler's picture of the cluster, fed by informers (see the module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.jobs: dict[str, dict[str, Any]] = {}  # uid -> Job
        self.workloads: dict[str, dict[str, Any]] = {}  # ns/name -> Workload
        self.unfinished_workloads: set[str] = set()
        """Keys of the stored Workloads without Finished=True: the queue statuses count only
        those, and finished ones pile up (kept until their owner deletes them)."""
        self.workload_of_job: dict[str, str] = {}  # job uid -> workload key
        self.prebuilt_jobs: dict[str, str] = {}  # prebuilt workload key -> job uid
        self.cluster_queues: dict[str, dict[str, Any]] = {}  # name -> ClusterQueue as stored
        self.local_queues: dict[str, dict[str, Any]] = {}  # ns/name -> LocalQueue as stored
        self.resource_flavors: dict[str, dict[str, Any]] = {}  # name -> ResourceFlavor as stored
        self.default_priority_classes: set[str] = set()  # names with globalDefault: true
        self.dirty_jobs: set[str] = set()
        self.admission_checks: dict[str, dict[str, Any]] = {}  # name -> AdmissionCheck as stored
        self.dirty_workloads: set[str] = set()
        """Workloads whose admission-check states may call for a step (``kube.checks``)."""
        self.dirty_checks: set[str] = set()
        """AdmissionChecks whose status kuota may have to set (``scheduler.kube.checks``)."""
        self.pod_groups: dict[str, dict[str, dict[str, Any]]] = {}
        """Pod group key (``podgroup/<ns>/<name>``) -> uid -> managed Pod of the group."""

    # -- kuota kinds ------------------------------------------------------------------
    def on_kueue(self, event: Event) -> None:
        obj = event.object
        kind = str(obj.get("kind", ""))
        if self._stale(event, self._known(kind, event.key)):
            return
        if kind == "Workload":
            self._index_workload(event)
        elif kind == "ResourceFlavor":
            self.dirty_jobs.update(self.jobs)  # a Job waiting for this flavor can start now
            self.dirty_jobs.update(self.pod_groups)
        elif kind == "AdmissionCheck" and event.type != "DELETED":
            self.dirty_checks.add(event.key)
        elif kind == "ClusterQueue" and self._spec_changed(self.cluster_queues.get(event.key), obj):
            # Its checks may have changed: the lists of its workloads are synced (9.2).
            name = objects.name(obj)
            self.dirty_workloads.update(
                key
                for key, workload in self.workloads.items()
                if objects.admission_check_states(workload)
                and objects.admitted_cluster_queue(workload) == name
            )
        store = self._raw_store(kind)
        if store is not None:
            if event.type == "DELETED":
                store.pop(event.key, None)
            else:
                store[event.key] = dict(obj)
        if event.type == "DELETED" or (kind == "ClusterQueue" and objects.is_being_deleted(obj)):
            # A ClusterQueue being deleted is terminating (Kueue's rule): it admits
            # nothing new, and the engine forgets it once its last reservation is
            # released; applying it again would make it active.
            self.engine.remove(kind, objects.name(obj), objects.namespace(obj))
            return
        try:
            model = parse_object(apply_schema_defaults(obj))
        except ParseError as bad:
            log.warning(
                "skipping an object that does not parse",
                extra={"object": f"{kind}/{event.key}", "error": str(bad)},
            )
            return
        self.engine.apply(model)  # type: ignore[arg-type]

    @staticmethod
    def _spec_changed(known: Mapping[str, Any] | None, incoming: Mapping[str, Any]) -> bool:
        """A new generation of an object already known (not a status write, not the first list)."""
        return known is not None and objects.generation(known) != objects.generation(incoming)

    @staticmethod
    def _stale(event: Event, known: Mapping[str, Any] | None) -> bool:
        """Whether ``event`` shows an older version than the one already stored.

        The executor stores the answer of its own writes at once, so the watch
        may still deliver versions from before that write: applying one would
        undo what the scheduler knows (an admission it made would look
        released).  Deletions always count.
        """
        if event.type == "DELETED" or known is None or not objects.is_older(event.object, known):
            return False
        log.debug(
            "skipping a stale event",
            extra={
                "object": event.key,
                "seen": objects.resource_version(event.object),
                "known": objects.resource_version(known),
            },
        )
        return True

    def _known(self, kind: str, key: str) -> dict[str, Any] | None:
        """The stored raw object of ``kind`` at ``key``, if the mirror keeps that kind."""
        store = self.workloads if kind == "Workload" else self._raw_store(kind)
        return store.get(key) if store is not None else None

    def _raw_store(self, kind: str) -> dict[str, dict[str, Any]] | None:
        return {
            "ClusterQueue": self.cluster_queues,
            "LocalQueue": self.local_queues,
            "ResourceFlavor": self.resource_flavors,
            "AdmissionCheck": self.admission_checks,
        }.get(kind)

    def _index_workload(self, event: Event) -> None:
        job_uid = self.job_uid_of(event.object)
        if event.type == "DELETED":
            self.workloads.pop(event.key, None)
            self.unfinished_workloads.discard(event.key)
            if job_uid and self.workload_of_job.get(job_uid) == event.key:
                del self.workload_of_job[job_uid]
        else:
            self._store_workload(event.key, event.object)  # not stale: on_kueue checked
            if objects.admission_check_states(event.object):
                self.dirty_workloads.add(event.key)
            if job_uid:
                self.workload_of_job[job_uid] = event.key
        if job_uid:
            self.dirty_jobs.add(job_uid)

    # -- core kinds ---------------------------------------------------------------------
    def on_job(self, event: Event) -> None:
        uid = objects.uid(event.object)
        if uid is None:
            return
        group = group_key_of_pod(event.object) if event.object.get("kind") == "Pod" else None
        if group is not None:
            self._on_group_pod(event, group, uid)
            return
        if self._stale(event, self.jobs.get(uid)):
            return
        prebuilt = objects.prebuilt_workload_name(event.object)
        prebuilt_key = workload_key(objects.namespace(event.object) or "", prebuilt or "")
        if event.type == "DELETED":
            self.jobs.pop(uid, None)
            if prebuilt and self.prebuilt_jobs.get(prebuilt_key) == uid:
                del self.prebuilt_jobs[prebuilt_key]
        else:
            self.jobs[uid] = dict(event.object)  # not stale: checked above
            if prebuilt:
                self.prebuilt_jobs[prebuilt_key] = uid
            self.dirty_jobs.add(uid)

    def _on_group_pod(self, event: Event, group: str, uid: str) -> None:
        """A pod of a group: kept with its group, which is reconciled as one job."""
        pods = self.pod_groups.setdefault(group, {})
        if self._stale(event, pods.get(uid)):
            return
        if event.type == "DELETED":
            pods.pop(uid, None)
            if not pods:
                del self.pod_groups[group]
        else:
            pods[uid] = dict(event.object)
        self.dirty_jobs.add(group)

    def remember_pod(self, pod: Mapping[str, Any]) -> None:
        """A pod (of a group or not) as a write stored it, unless the watch brought a later one."""
        uid = objects.uid(pod) or ""
        group = group_key_of_pod(pod)
        if group is None:
            self.remember_job(uid, pod)
            return
        pods = self.pod_groups.setdefault(group, {})
        known = pods.get(uid)
        if known is None or not objects.is_older(pod, known):
            pods[uid] = dict(pod)

    def remember_job(self, uid: str, job: Mapping[str, Any]) -> None:
        """The Job as a write of the scheduler stored it (unless the watch brought a later one)."""
        known = self.jobs.get(uid)
        if known is None or not objects.is_older(job, known):
            self.jobs[uid] = dict(job)

    def remember_workload(self, key: str, workload: Mapping[str, Any]) -> None:
        """The Workload as a write stored it (unless the watch brought a later one)."""
        known = self.workloads.get(key)
        if known is None or not objects.is_older(workload, known):
            self._store_workload(key, workload)

    def _store_workload(self, key: str, workload: Mapping[str, Any]) -> None:
        self.workloads[key] = dict(workload)
        if objects.is_finished(workload):
            self.unfinished_workloads.discard(key)
        else:
            self.unfinished_workloads.add(key)

    def on_namespace(self, event: Event) -> None:
        name = objects.name(event.object)
        if event.type == "DELETED":
            self.engine.remove("Namespace", name)
        else:
            self.engine.apply(NamespaceInfo(name=name, labels=objects.labels(event.object)))

    def on_priority_class(self, event: Event) -> None:
        obj = event.object
        name = objects.name(obj)
        self.default_priority_classes.discard(name)
        if event.type == "DELETED":
            self.engine.remove("PriorityClass", name)
            return
        value = obj.get("value")
        if not isinstance(value, int):
            return
        if obj.get("globalDefault"):
            self.default_priority_classes.add(name)
        self.engine.apply(
            PriorityClassInfo(name=name, value=value, global_default=bool(obj.get("globalDefault")))
        )

    # -- queries (the two places that read the engine's catalog) ------------------------
    def classes(self) -> PriorityClasses:
        """The priority classes a new Workload is resolved against (scheduling.md 2.1)."""
        values = self.engine.priority_class_values("PriorityClass")
        defaults = ((n, values[n]) for n in self.default_priority_classes if n in values)
        default = min(defaults, key=lambda item: (item[1], item[0]), default=None)
        return PriorityClasses(
            workload=self.engine.priority_class_values("WorkloadPriorityClass"),
            pod=values,
            global_default=default,
        )

    def flavor_placements(self) -> Mapping[str, FlavorPlacement]:
        """The node labels and tolerations of every flavor the engine knows (a live view)."""
        return _FlavorPlacements(self.engine.flavor_specs())

    def workload_for(self, job_uid: str) -> dict[str, Any] | None:
        """The Job's Workload: the prebuilt one it names, else the one it owns."""
        job = self.jobs.get(job_uid)
        prebuilt = objects.prebuilt_workload_name(job) if job is not None else None
        if job is not None and prebuilt:
            return self.workloads.get(workload_key(objects.namespace(job) or "", prebuilt))
        key = self.workload_of_job.get(job_uid)
        return self.workloads.get(key) if key else None

    def job_uid_of(self, workload: Mapping[str, Any]) -> str | None:
        """The key the Workload's job is reconciled by: its owner Job's UID, its pod
        group's key, else the UID of a Job that names it prebuilt."""
        owner = objects.owner_job_uid(workload) or group_key_of_workload(workload)
        if owner:
            return owner
        return self.prebuilt_jobs.get(objects.key(workload))
