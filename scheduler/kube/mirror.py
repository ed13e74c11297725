"""Routing informer events into the engine and the Job index.

Every kuota object arrives as raw JSON; it is defaulted and parsed by the API
layer exactly as the webhook and ``kuota simulate`` do, then applied to the
engine.  An object that does not parse is logged and skipped (bad input never
stops the scheduler).  Jobs are indexed by UID and Workloads by the UID of the
Job that owns them, so the Job reconciler can find the pair in O(1); every
change marks the affected Job dirty for the next reconcile pass.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from scheduler.api.defaults import apply_schema_defaults
from scheduler.api.field import ParseError
from scheduler.api.parse import parse_object
from scheduler.core.engine import Engine, NamespaceInfo, PriorityClassInfo
from scheduler.jobs.workload_from_job import PriorityClasses
from scheduler.kube.informer import Event
from scheduler.jobs.controller import FlavorPlacement

log = logging.getLogger("kuota.mirror")
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
KUEUE_KINDS = (
    "ResourceFlavor",
    "ClusterQueue",
    "Cohort",
    "LocalQueue",
    "Workload",
    "WorkloadPriorityClass",
    "AdmissionCheck",
)


def owner_job_uid(workload: Mapping[str, Any]) -> str | None:
    """Pure: the UID of the Job that owns this Workload, if any."""
    for owner in (workload.get("metadata") or {}).get("ownerReferences") or []:
        if owner.get("kind") == "Job" and str(owner.get("apiVersion", "")).startswith("batch/"):
            return str(owner.get("uid"))
    return ((workload.get("metadata") or {}).get("labels") or {}).get(JOB_UID_LABEL)


class Mirror:
    """The scheduler's picture of the cluster, fed by informers."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.jobs: dict[str, dict[str, Any]] = {}  # uid -> Job
        self.workloads: dict[str, dict[str, Any]] = {}  # ns/name -> Workload
        self.workload_of_job: dict[str, str] = {}  # job uid -> workload key
        self.flavors: dict[str, FlavorPlacement] = {}
        self.cluster_queues: dict[str, dict[str, Any]] = {}  # name -> ClusterQueue as stored
        self.local_queues: dict[str, dict[str, Any]] = {}  # ns/name -> LocalQueue as stored
        self.priority_classes: dict[str, int] = {}
        self.default_classes: dict[str, int] = {}  # globalDefault PriorityClasses
        self.workload_priority_classes: dict[str, int] = {}
        self.dirty_jobs: set[str] = set()
        self.changed = False

    # -- kuota kinds ------------------------------------------------------------------
    def on_kueue(self, event: Event) -> None:
        obj = event.object
        kind = str(obj.get("kind", ""))
        meta = obj.get("metadata") or {}
        self.changed = True
        if kind == "Workload":
            self._index_workload(event)
        if kind == "ResourceFlavor":
            self._index_flavor(event)
        if kind in ("ClusterQueue", "LocalQueue"):
            store = self.cluster_queues if kind == "ClusterQueue" else self.local_queues
            if event.type == "DELETED":
                store.pop(event.key, None)
            else:
                store[event.key] = dict(obj)
        if kind == "WorkloadPriorityClass":
            name = str(meta.get("name"))
            value = obj.get("value")
            if event.type == "DELETED" or not isinstance(value, int):
                self.workload_priority_classes.pop(name, None)
            else:
                self.workload_priority_classes[name] = value
        if event.type == "DELETED":
            self.engine.remove(kind, str(meta.get("name")), meta.get("namespace"))
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

    def _index_workload(self, event: Event) -> None:
        job_uid = owner_job_uid(event.object)
        if event.type == "DELETED":
            self.workloads.pop(event.key, None)
            if job_uid and self.workload_of_job.get(job_uid) == event.key:
                del self.workload_of_job[job_uid]
        else:
            self.workloads[event.key] = dict(event.object)
            if job_uid:
                self.workload_of_job[job_uid] = event.key
        if job_uid:
            self.dirty_jobs.add(job_uid)

    def _index_flavor(self, event: Event) -> None:
        name = str((event.object.get("metadata") or {}).get("name"))
        if event.type == "DELETED":
            self.flavors.pop(name, None)
        else:
            spec = event.object.get("spec") or {}
            self.flavors[name] = FlavorPlacement(
                node_labels=dict(spec.get("nodeLabels") or {}),
                tolerations=tuple(dict(t) for t in spec.get("tolerations") or []),
            )
        self.dirty_jobs.update(self.jobs)  # a Job waiting for this flavor can start now

    # -- core kinds ---------------------------------------------------------------------
    def on_job(self, event: Event) -> None:
        uid = str((event.object.get("metadata") or {}).get("uid"))
        if event.type == "DELETED":
            self.jobs.pop(uid, None)
        else:
            self.jobs[uid] = dict(event.object)
            self.dirty_jobs.add(uid)

    def on_namespace(self, event: Event) -> None:
        name = str((event.object.get("metadata") or {}).get("name"))
        self.changed = True
        if event.type == "DELETED":
            self.engine.remove("Namespace", name)
        else:
            labels = (event.object.get("metadata") or {}).get("labels") or {}
            self.engine.apply(NamespaceInfo(name=name, labels=dict(labels)))

    def on_priority_class(self, event: Event) -> None:
        obj = event.object
        name = str((obj.get("metadata") or {}).get("name"))
        self.changed = True
        self.default_classes.pop(name, None)
        if event.type == "DELETED":
            self.priority_classes.pop(name, None)
            self.engine.remove("PriorityClass", name)
            return
        value = obj.get("value")
        if not isinstance(value, int):
            return
        self.priority_classes[name] = value
        if obj.get("globalDefault"):
            self.default_classes[name] = value
        self.engine.apply(
            PriorityClassInfo(name=name, value=value, global_default=bool(obj.get("globalDefault")))
        )

    # -- queries ------------------------------------------------------------------------
    def classes(self) -> PriorityClasses:
        """The priority classes a new Workload is resolved against (scheduling.md 2.1)."""
        default = min(
            self.default_classes.items(), key=lambda item: (item[1], item[0]), default=None
        )
        return PriorityClasses(
            workload=dict(self.workload_priority_classes),
            pod=dict(self.priority_classes),
            global_default=default,
        )

    def workload_for(self, job_uid: str) -> dict[str, Any] | None:
        key = self.workload_of_job.get(job_uid)
        return self.workloads.get(key) if key else None
