"""The Workload of one replica group, and a pod put into its group (pure).

Kinds queued a group at a time (:class:`~scheduler.jobs.protocol.ReplicaGroups`:
a LeaderWorkerSet's replicas, a StatefulSet's pods) make their Workloads
and place their pods the same way, as Kueue's reconcilers for them do: one
home for that shape, each kind saying what is its own (names, counts,
roles, extra annotations).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import (
    IS_GROUP_WORKLOAD_ANNOTATION,
    JOB_UID_LABEL,
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
    POD_GROUP_NAME_LABEL,
    POD_GROUP_TOTAL_COUNT_ANNOTATION,
    PREBUILT_WORKLOAD_KEY,
    ROLE_HASH_ANNOTATION,
    V1BETA2,
)
from scheduler.jobs.workload_from_job import (
    PriorityClasses,
    maximum_execution_time,
    priority_of,
)

JOB_OWNER_GVK_ANNOTATION: Final = "kueue.x-k8s.io/job-owner-gvk"
JOB_OWNER_NAME_ANNOTATION: Final = "kueue.x-k8s.io/job-owner-name"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def group_workload_spec(
    owner: Mapping[str, Any],
    pod_sets: list[dict[str, Any]],
    priority_classes: PriorityClasses | None,
) -> dict[str, Any]:
    """A group Workload's spec: the pod sets, the owner's queue, priority, time limit: pure."""
    ref, priority = priority_of(owner, priority_classes or PriorityClasses(), pod_sets)
    spec: dict[str, Any] = {"podSets": pod_sets}
    queue = objects.queue_name(owner)
    if queue:
        spec["queueName"] = queue
    if ref is not None:
        spec["priorityClassRef"] = ref
    if priority is not None:
        spec["priority"] = priority
    max_exec = maximum_execution_time(owner)
    if max_exec is not None:
        spec["maximumExecutionTimeSeconds"] = max_exec
    return spec


def group_workload(
    owner: Mapping[str, Any],
    *,
    name: str,
    api_version: str,
    kind: str,
    spec: Mapping[str, Any],
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The Workload ``name`` of one of ``owner``'s groups, owned and labelled by it: pure."""
    owner_name, uid = objects.name(owner), objects.uid(owner) or ""
    return {
        "apiVersion": V1BETA2,
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": objects.namespace(owner) or "",
            "labels": {JOB_UID_LABEL: uid},
            "annotations": {
                IS_GROUP_WORKLOAD_ANNOTATION: "true",
                JOB_OWNER_GVK_ANNOTATION: f"{api_version}, Kind={kind}",
                JOB_OWNER_NAME_ANNOTATION: owner_name,
                **(annotations or {}),
            },
            "ownerReferences": [
                {
                    "apiVersion": api_version,
                    "kind": kind,
                    "name": owner_name,
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": copy.deepcopy(dict(spec)),
    }


def into_group(
    pod: Mapping[str, Any],
    *,
    group: str,
    total: int,
    role: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A copy of a held-back pod in pod group ``group`` (its prebuilt Workload): pure."""
    placed = copy.deepcopy(dict(pod))
    metadata = placed.setdefault("metadata", {})
    metadata["labels"] = {
        **_mapping(metadata.get("labels")),
        MANAGED_LABEL: MANAGED_LABEL_VALUE,
        **labels,
    }
    metadata["annotations"] = {
        **_mapping(metadata.get("annotations")),
        POD_GROUP_NAME_LABEL: group,
        PREBUILT_WORKLOAD_KEY: group,
        POD_GROUP_TOTAL_COUNT_ANNOTATION: str(total),
        **(annotations or {}),
        ROLE_HASH_ANNOTATION: role,
    }
    return placed


__all__ = [
    "JOB_OWNER_GVK_ANNOTATION",
    "JOB_OWNER_NAME_ANNOTATION",
    "group_workload",
    "group_workload_spec",
    "into_group",
]
