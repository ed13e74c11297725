"""A StatefulSet's pods as Kueue v0.19 queues them: one pod group, its Workload made from the set.

Kueue names a StatefulSet's Workload after the StatefulSet's name *and UID*,
which its webhook never sees on create; so the webhook only marks the pod
template (:mod:`.integration`), and the rest happens once the StatefulSet
exists, from the object itself (docs/concepts.md#statefulsets):

- **the Workload** ``statefulset-<name>-<hash>`` (Kueue's naming rule, the
  hash covering the UID) is made while ``spec.replicas`` (default 1) is above
  zero: one pod set ``main`` of ``replicas`` pods whose template is the pod
  template's spec (its topology request, as Kueue's, from the template's
  annotations and numbered by the pod index), owned by the StatefulSet,
  labelled with its UID, marked as a group's Workload, with its queue name
  and priority;
- **each pod** the StatefulSet's controller makes (gated by the pod webhook,
  since the template is marked) joins that group: the managed label, the
  queue name and WorkloadPriorityClass of the StatefulSet *now* (not of the
  template, which keeps the queue name it was created with so that a queue
  change does not make a new revision), the group and prebuilt Workload
  names, the group's size, fast admission (pods come one by one), serving
  (it never finishes) and the role ``main``; a pod already in the group
  follows a later queue-name change of its StatefulSet;
- **scaled to zero**, the Workload stays: an admitted one gives its quota
  back and is put on hold (``QuotaReserved=False``, reason ``OnHold``), and
  scaling up again takes the hold off, so it queues anew.

Everything here is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import (
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
    POD_GROUP_FAST_ADMISSION_ANNOTATION,
    POD_GROUP_NAME_LABEL,
    POD_GROUP_SERVING_ANNOTATION,
    POD_SUSPENDING_PARENT_ANNOTATION,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
)
from scheduler.jobs import pod_template, topology
from scheduler.jobs.group_workloads import group_workload, group_workload_spec, into_group
from scheduler.jobs.pod.pods import MAIN_POD_SET, is_gated
from scheduler.jobs.workload_from_job import (
    PriorityClasses,
    workload_name,
)

FRAMEWORK: Final = "statefulset"
API_VERSION: Final = "apps/v1"
KIND: Final = "StatefulSet"
GROUP: Final = "apps"
ON_HOLD_MESSAGE: Final = "StatefulSet scaled to zero; workload on hold"

_mapping = pod_template.mapping


def replicas(statefulset: Mapping[str, Any]) -> int:
    """``spec.replicas`` (default 1): pure."""
    value = _mapping(statefulset.get("spec")).get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def template_parent(statefulset: Mapping[str, Any]) -> str | None:
    """The framework its pod template names as the pods' suspending parent, if any: pure."""
    template = _mapping(_mapping(statefulset.get("spec")).get("template"))
    found = _mapping(_mapping(template.get("metadata")).get("annotations")).get(
        POD_SUSPENDING_PARENT_ANNOTATION
    )
    return found if isinstance(found, str) else None


def managed_by_another_framework(statefulset: Mapping[str, Any]) -> bool:
    """Its template names another suspending parent (a LeaderWorkerSet's StatefulSets):
    that framework queues its pods, not this one (Kueue's rule): pure."""
    parent = template_parent(statefulset)
    return parent is not None and parent != FRAMEWORK


def queued(statefulset: Mapping[str, Any], *, without_queue_name: bool) -> bool:
    """It names a queue or, with manageJobsWithoutQueueName, its template was marked by the
    webhook all the same (its Workload then names no queue: it waits until the StatefulSet
    gets one, as in Kueue): pure."""
    if objects.queue_name(statefulset):
        return True
    return without_queue_name and template_parent(statefulset) == FRAMEWORK


def group_name(statefulset: Mapping[str, Any]) -> str:
    """The Workload (and pod group) name: Kueue's ``GetWorkloadName(uid, name)``: pure."""
    return workload_name(
        objects.name(statefulset), objects.uid(statefulset) or "", kind=KIND, group=GROUP
    )


def pod_sets(statefulset: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One pod set ``main`` of ``replicas`` pods, the template's spec alone: pure."""
    template = _mapping(_mapping(statefulset.get("spec")).get("template"))
    pod_set = {
        "name": MAIN_POD_SET,
        "count": replicas(statefulset),
        # An empty metadata, as Kueue's Go client writes it: a user's read-modify-write of the
        # Workload through a Go client (spec.active) then sends the pod set unchanged.
        "template": {"metadata": {}, "spec": copy.deepcopy(dict(_mapping(template.get("spec"))))},
    }
    request = topology.topology_request(template, pod_index_label=topology.STATEFULSET_POD_INDEX)
    if request is not None:
        pod_set["topologyRequest"] = request
    return [dict(pod_template.without_duplicate_env(pod_set))]


def workload(
    statefulset: Mapping[str, Any], *, priority_classes: PriorityClasses | None = None
) -> dict[str, Any]:
    """The StatefulSet's Workload as Kueue's reconciler makes it: pure."""
    return group_workload(
        statefulset,
        name=group_name(statefulset),
        api_version=API_VERSION,
        kind=KIND,
        spec=group_workload_spec(statefulset, pod_sets(statefulset), priority_classes),
    )


def replica_workloads(
    statefulset: Mapping[str, Any], *, priority_classes: PriorityClasses | None = None
) -> dict[str, dict[str, Any]]:
    """Its one Workload by name while it has replicas; none at zero or when another
    framework queues its pods: pure."""
    if replicas(statefulset) == 0 or managed_by_another_framework(statefulset):
        return {}
    made = workload(statefulset, priority_classes=priority_classes)
    return {objects.name(made): made}


def owner_of_pod(pod: Mapping[str, Any]) -> str | None:
    """The StatefulSet that controls the pod (its controller reference), if any: pure."""
    reference = objects.controller_reference(pod)
    if reference is None or reference.get("kind") != KIND:
        return None
    if reference.get("apiVersion") != API_VERSION:
        return None
    name = reference.get("name")
    return name if isinstance(name, str) and name else None


def place_pod(statefulset: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of the pod in the StatefulSet's group, or with its queue name now; None when
    it is where it should be, or not the StatefulSet's to place: pure.

    Not placed: a pod of another StatefulSet, one its template did not mark, and one
    kuota did not hold back (not gated: it was made before the StatefulSet was queued).
    A StatefulSet naming no queue (manageJobsWithoutQueueName) puts its pods in the group
    with no queue name; they get one when it does.
    """
    queue = objects.queue_name(statefulset)
    if (
        owner_of_pod(pod) != objects.name(statefulset)
        or objects.annotation(pod, POD_SUSPENDING_PARENT_ANNOTATION) != FRAMEWORK
        or managed_by_another_framework(statefulset)
    ):
        return None
    group = group_name(statefulset)
    if objects.annotation(pod, POD_GROUP_NAME_LABEL) == group:
        if not queue or objects.queue_name(pod) == queue or replicas(statefulset) == 0:
            return None
        moved = copy.deepcopy(dict(pod))
        metadata = moved.setdefault("metadata", {})
        metadata["labels"] = {**_mapping(metadata.get("labels")), QUEUE_NAME_LABEL: queue}
        return moved
    if objects.label(pod, MANAGED_LABEL) == MANAGED_LABEL_VALUE or not is_gated(pod):
        return None
    labels = {QUEUE_NAME_LABEL: queue} if queue else {}
    priority_class = objects.label(statefulset, PRIORITY_CLASS_LABEL)
    if priority_class:
        labels[PRIORITY_CLASS_LABEL] = priority_class
    return into_group(
        pod,
        group=group,
        total=replicas(statefulset),
        role=MAIN_POD_SET,
        labels=labels,
        annotations={
            POD_GROUP_FAST_ADMISSION_ANNOTATION: "true",
            POD_GROUP_SERVING_ANNOTATION: "true",
        },
    )


def should_hold(statefulset: Mapping[str, Any], workload: Mapping[str, Any]) -> bool:
    """Scaled to zero while its Workload holds quota, unfinished and active: pure."""
    return (
        replicas(statefulset) == 0
        and objects.has_quota_reservation(workload)
        and not objects.is_finished(workload)
        and not objects.is_deactivated(workload)
    )


def should_release_hold(statefulset: Mapping[str, Any], workload: Mapping[str, Any]) -> bool:
    """Scaled up again while its Workload is on hold: pure."""
    return replicas(statefulset) > 0 and objects.is_on_hold(workload)


__all__ = [
    "FRAMEWORK",
    "ON_HOLD_MESSAGE",
    "group_name",
    "managed_by_another_framework",
    "owner_of_pod",
    "place_pod",
    "pod_sets",
    "queued",
    "replica_workloads",
    "replicas",
    "should_hold",
    "should_release_hold",
    "workload",
]
