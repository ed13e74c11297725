"""What a started job's pod template receives from its admission (pure).

:func:`placement` turns a Workload's admission into the pod sets' run-with
information: each flavor's node labels and tolerations, the admission
checks' ``podSetUpdates``, kuota's labels (queue, cluster queue, the job's
UID for :data:`STARTED_PODS_SELECTOR`) and the topology gate of pod sets
placed by topology (docs/concepts.md#how-a-job-is-suspended-admitted-and-started).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import (
    CLUSTER_QUEUE_LABEL,
    ELASTIC_JOB_ANNOTATION,
    ELASTIC_JOB_GATE,
    JOB_UID_LABEL,
    LOCAL_QUEUE_LABEL,
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
    POD_SET_LABEL,
)
from scheduler.jobs import topology
from scheduler.jobs.actions import (
    WaitForFlavor,
)
from scheduler.jobs.protocol import (
    PodSetInfo,
)


@dataclass(frozen=True, slots=True)
class FlavorPlacement:
    """The node-matching data of a ResourceFlavor that a started Job receives."""

    node_labels: Mapping[str, str]
    tolerations: tuple[Mapping[str, Any], ...] = ()


STARTED_PODS_SELECTOR: Final = f"{JOB_UID_LABEL},{MANAGED_LABEL}!={MANAGED_LABEL_VALUE}"
"""The pods started for a job (labelled with its UID by :func:`placement`); the Pods kuota
queues itself are jobs of their own and carry ``kueue.x-k8s.io/managed``."""


def live_pod_count(pods: Iterable[Mapping[str, Any]], job_uid: str) -> int:
    """How many of ``pods`` were started for the job and have not terminated: pure.

    A pod in its termination grace period has not: it still holds its node.
    """
    return sum(
        1
        for pod in pods
        if objects.label(pod, JOB_UID_LABEL) == job_uid
        and objects.status(pod).get("phase") not in ("Succeeded", "Failed")
    )


def _label_value_ok(value: str) -> bool:
    return (
        len(value) <= 63
        and all(c.isalnum() or c in "-_." for c in value)
        and (not value or (value[0].isalnum() and value[-1].isalnum()))
    )


def placement(
    workload: Mapping[str, Any],
    flavors: Mapping[str, FlavorPlacement],
    queue_name: str,
    *,
    job_uid: str | None = None,
) -> list[PodSetInfo] | WaitForFlavor:
    """Per admitted pod set: the union of its flavors' labels and tolerations, pure.

    ``job_uid``: the UID of the job started, put on its pods as the label
    ``kueue.x-k8s.io/job-uid`` so the scheduler sees every pod of the job
    until it has stopped.
    """
    cluster_queue = objects.admitted_cluster_queue(workload)
    pod_sets = {
        str(pod_set.get("name", "main")): pod_set
        for pod_set in objects.spec(workload).get("podSets") or []
        if isinstance(pod_set, Mapping)
    }
    infos = []
    for assignment in objects.pod_set_assignments(workload):
        selector: dict[str, str] = {}
        tolerations: list[Mapping[str, Any]] = []
        for flavor_name in sorted(set((assignment.get("flavors") or {}).values())):
            flavor = flavors.get(flavor_name)
            if flavor is None:
                return WaitForFlavor(flavor_name)
            selector.update(flavor.node_labels)
            tolerations += [t for t in flavor.tolerations if t not in tolerations]
        name = str(assignment.get("name", "main"))
        labels = {POD_SET_LABEL: name, LOCAL_QUEUE_LABEL: queue_name}
        if job_uid and _label_value_ok(job_uid):
            labels[JOB_UID_LABEL] = job_uid
        if _label_value_ok(cluster_queue):
            labels[CLUSTER_QUEUE_LABEL] = cluster_queue
        annotations: dict[str, str] = {topology.WORKLOAD_ANNOTATION: objects.name(workload)}
        gates: tuple[str, ...] = ()
        if assignment.get("topologyAssignment") is not None:
            annotations.update(
                topology.started_annotations(pod_sets.get(name, {}), objects.name(workload))
            )
            gates = (topology.TOPOLOGY_GATE,)
        if objects.annotation(workload, ELASTIC_JOB_ANNOTATION) == "true":
            # Each pod waits until an admitted slice counts it (docs/concepts.md#elastic-jobs).
            gates = (*gates, ELASTIC_JOB_GATE)
        for update in _pod_set_updates(workload, str(assignment.get("name", "main"))):
            labels.update(_strings(update.get("labels")))
            annotations.update(_strings(update.get("annotations")))
            selector.update(_strings(update.get("nodeSelector")))
            extra = update.get("tolerations")
            for toleration in extra if isinstance(extra, list) else []:
                if isinstance(toleration, Mapping) and toleration not in tolerations:
                    tolerations.append(toleration)
        infos.append(
            PodSetInfo(
                name=str(assignment.get("name", "main")),
                count=int(assignment.get("count") or 0),
                node_selector=selector,
                tolerations=tuple(tolerations),
                labels=labels,
                annotations=annotations,
                scheduling_gates=gates,
            )
        )
    return infos


def _strings(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _pod_set_updates(workload: Mapping[str, Any], pod_set: str) -> list[Mapping[str, Any]]:
    """The ``podSetUpdates`` of every admission check for ``pod_set``, by check name: pure."""
    updates = []
    checks = sorted(objects.admission_check_states(workload), key=lambda c: str(c.get("name")))
    for check in checks:
        found = check.get("podSetUpdates")
        for update in found if isinstance(found, list) else []:
            if isinstance(update, Mapping) and update.get("name") == pod_set:
                updates.append(update)
    return updates
