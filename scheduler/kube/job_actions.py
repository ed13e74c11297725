"""What a queued Job needs next, decided from the Job and its Workload (pure).

The Job controller of kuota is this one function, :func:`next_action`, plus
an executor that performs the action.  Keeping the decision pure means every
situation a restart can leave behind is a unit test:

- a queued Job without a Workload gets one (the name is a hash of the Job's
  UID, so a second create after a crash is a harmless "already exists");
- a Workload whose status records an admission while its Job is still
  suspended gets the Job started: one patch, ``suspend: false`` plus the
  flavors' node labels (a crash between the status write and this patch is
  finished here, never repeated: a running Job needs nothing);
- a queued Job that runs without an admission (the webhook was down) is
  suspended again, unless it has already finished;
- a finished Job marks its Workload ``Finished``;
- an evicted Workload stops its Job (suspended, pod template restored to what
  the user wrote) and, once the Job has no active pods, gives its quota back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from scheduler.jobs.base import JobIntegration, PodSetInfo
from scheduler.jobs.registry import for_object
from scheduler.jobs.workload_from_job import PriorityClasses, workload_from_job
from scheduler.kube.conditions import is_admitted, is_evicting, is_finished

POD_SET_LABEL = "kueue.x-k8s.io/podset"
LOCAL_QUEUE_LABEL = "kueue.x-k8s.io/local-queue-name"
CLUSTER_QUEUE_LABEL = "kueue.x-k8s.io/cluster-queue-name"


@dataclass(frozen=True, slots=True)
class FlavorPlacement:
    """The node-matching data of a ResourceFlavor that a started Job receives."""

    node_labels: Mapping[str, str]
    tolerations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class CreateWorkload:
    workload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StartJob:
    job: dict[str, Any]
    cluster_queue: str


@dataclass(frozen=True, slots=True)
class SuspendJob:
    job: dict[str, Any]
    message: str


@dataclass(frozen=True, slots=True)
class FinishWorkload:
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class RestoreJob:
    """Put the user's pod template back on a suspended Job.

    The API server allows template changes only on a suspended Job whose
    ``status.startTime`` is unset, so a Job that ran gets that cleared first.
    """

    job: dict[str, Any]
    clear_start_time: bool
    message: str


@dataclass(frozen=True, slots=True)
class DeactivateWorkload:
    """``spec.active: false`` on an admitted Workload: record the eviction, then stop like any other."""

    message: str = "The workload is deactivated"


@dataclass(frozen=True, slots=True)
class ReleaseWorkload:
    """The evicted Job has no pods left: the Workload's quota can be released."""


@dataclass(frozen=True, slots=True)
class WaitForFlavor:
    """The admission names a flavor the scheduler has not seen yet: try again later."""

    flavor: str


Action = Union[
    CreateWorkload,
    StartJob,
    SuspendJob,
    RestoreJob,
    FinishWorkload,
    DeactivateWorkload,
    ReleaseWorkload,
    WaitForFlavor,
]


def _label_value_ok(value: str) -> bool:
    return (
        len(value) <= 63
        and all(c.isalnum() or c in "-_." for c in value)
        and (not value or (value[0].isalnum() and value[-1].isalnum()))
    )


def placement(
    workload: Mapping[str, Any], flavors: Mapping[str, FlavorPlacement], queue_name: str
) -> list[PodSetInfo] | WaitForFlavor:
    """Per admitted pod set: the union of its flavors' labels and tolerations (6.3), pure."""
    admission = (workload.get("status") or {}).get("admission") or {}
    cluster_queue = str(admission.get("clusterQueue", ""))
    infos = []
    for assignment in admission.get("podSetAssignments") or []:
        selector: dict[str, str] = {}
        tolerations: list[Mapping[str, Any]] = []
        for flavor_name in sorted(set((assignment.get("flavors") or {}).values())):
            flavor = flavors.get(flavor_name)
            if flavor is None:
                return WaitForFlavor(flavor_name)
            selector.update(flavor.node_labels)
            tolerations += [t for t in flavor.tolerations if t not in tolerations]
        labels = {POD_SET_LABEL: str(assignment.get("name", "main")), LOCAL_QUEUE_LABEL: queue_name}
        if _label_value_ok(cluster_queue):
            labels[CLUSTER_QUEUE_LABEL] = cluster_queue
        infos.append(
            PodSetInfo(
                name=str(assignment.get("name", "main")),
                count=int(assignment.get("count") or 0),
                node_selector=selector,
                tolerations=tuple(tolerations),
                labels=labels,
            )
        )
    return infos


def _active_pods(job: Mapping[str, Any]) -> int:
    value = (job.get("status") or {}).get("active")
    return value if isinstance(value, int) else 0


def next_action(
    job: Mapping[str, Any],
    workload: Mapping[str, Any] | None,
    *,
    flavors: Mapping[str, FlavorPlacement],
    priority_classes: PriorityClasses | None = None,
) -> Action | None:
    """The one thing to do for ``job`` now, or None when it is where it should be (pure)."""
    integration: JobIntegration | None = for_object(job)
    if integration is None:
        return None
    queue = integration.queue_name(job)
    if not queue or (job.get("metadata") or {}).get("deletionTimestamp"):
        return None
    finished = integration.finished(job)
    if workload is None:
        if finished.finished:
            return None
        if not integration.is_suspended(job):
            return SuspendJob(integration.suspend(job), "Not admitted by cluster queue")
        return CreateWorkload(
            workload_from_job(job, priority_classes=priority_classes, integration=integration)
        )
    if finished.finished:
        return None if is_finished(workload) else FinishWorkload(finished.reason, finished.message)
    if is_finished(workload):
        return None
    deactivated = (workload.get("spec") or {}).get("active") is False
    if deactivated and is_admitted(workload) and not is_evicting(workload):
        return DeactivateWorkload()
    if is_evicting(workload):
        evicted = next(
            c
            for c in (workload.get("status") or {}).get("conditions") or []
            if c.get("type") == "Evicted"
        )
        pod_sets = (workload.get("spec") or {}).get("podSets") or []
        message = str(evicted.get("message", ""))
        if not integration.is_suspended(job):
            return SuspendJob(integration.suspend(job), message)
        restored = integration.restore(job, pod_sets)
        if restored.get("spec") != job.get("spec"):
            started = bool((job.get("status") or {}).get("startTime"))
            return RestoreJob(restored, clear_start_time=started, message=message)
        if _active_pods(job):
            return None  # wait until the Job controller has removed its pods
        return ReleaseWorkload()
    if is_admitted(workload):
        if not integration.is_suspended(job):
            return None
        infos = placement(workload, flavors, queue)
        if isinstance(infos, WaitForFlavor):
            return infos
        cluster_queue = str(
            ((workload.get("status") or {}).get("admission") or {}).get("clusterQueue", "")
        )
        return StartJob(integration.run_with(job, infos), cluster_queue)
    if not integration.is_suspended(job):
        return SuspendJob(integration.suspend(job), "Not admitted by cluster queue")
    return None
