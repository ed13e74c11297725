"""Kueue's ``statefulset`` framework: a queued StatefulSet's pods form one pod group.

kuota's webhook marks the pod template of a queued StatefulSet on create and
update (:func:`propagate`), so that every pod it makes joins one pod group of
``replicas`` pods, queued by the pod webhook and the group logic
(:mod:`scheduler.jobs.pod.group`): the ``kueue.x-k8s.io/managed`` and
queue-name labels, the group name label, and the annotations
``pod-group-total-count`` (``replicas``), ``pod-group-fast-admission`` (the
Workload is made from the first pod: a StatefulSet makes its pods one by
one), ``pod-group-serving`` (it never finishes) and
``pod-suspending-parent: statefulset`` (no finalizer: the StatefulSet
replaces its pods).

The group (and Workload) name is ``statefulset-<name>-<hash>`` by Kueue's
naming rule; kuota hashes the name alone (Kueue's legacy form), since the
webhook does not know the StatefulSet's UID at creation.
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
    POD_GROUP_TOTAL_COUNT_ANNOTATION,
    POD_SUSPENDING_PARENT_ANNOTATION,
    PRIORITY_CLASS_LABEL,
    QUEUE_NAME_LABEL,
)
from scheduler.jobs import pod_template
from scheduler.jobs.protocol import ApiAccess, RawObject
from scheduler.jobs.workload_from_job import workload_name

STATEFULSET_FRAMEWORK: Final = "statefulset"


_mapping = pod_template.mapping


def group_name(statefulset: Mapping[str, Any]) -> str:
    """The pod group (and Workload) name of a StatefulSet: pure."""
    return workload_name(objects.name(statefulset), "", kind="StatefulSet", group="apps")


def replicas(statefulset: Mapping[str, Any]) -> int:
    value = _mapping(statefulset.get("spec")).get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def propagate(statefulset: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a queued StatefulSet whose pods will form its pod group: pure."""
    result = copy.deepcopy(dict(statefulset))
    template = result.setdefault("spec", {}).setdefault("template", {})
    metadata = template.setdefault("metadata", {})
    metadata["annotations"] = {
        **_mapping(metadata.get("annotations")),
        POD_SUSPENDING_PARENT_ANNOTATION: STATEFULSET_FRAMEWORK,
        POD_GROUP_TOTAL_COUNT_ANNOTATION: str(replicas(statefulset)),
        POD_GROUP_FAST_ADMISSION_ANNOTATION: "true",
        POD_GROUP_SERVING_ANNOTATION: "true",
    }
    labels = {
        **_mapping(metadata.get("labels")),
        MANAGED_LABEL: MANAGED_LABEL_VALUE,
        POD_GROUP_NAME_LABEL: group_name(statefulset),
    }
    queue = objects.queue_name(statefulset)
    if queue:
        labels[QUEUE_NAME_LABEL] = queue
    priority_class = objects.label(statefulset, PRIORITY_CLASS_LABEL)
    if priority_class:
        labels[PRIORITY_CLASS_LABEL] = priority_class
    metadata["labels"] = labels
    return result


class StatefulSet:
    """The ``statefulset`` integration: queued through its pods, as one group (pure)."""

    framework = STATEFULSET_FRAMEWORK
    api_version = "apps/v1"
    kind = "StatefulSet"
    group = "apps"
    resource = "statefulsets"
    access = ApiAccess()  # only the webhook's patch of the object being admitted

    def propagate(self, obj: RawObject) -> dict[str, Any]:
        return propagate(obj)


STATEFULSET: Final = StatefulSet()

__all__ = [
    "STATEFULSET",
    "STATEFULSET_FRAMEWORK",
    "StatefulSet",
    "group_name",
    "propagate",
    "replicas",
]
