"""A LeaderWorkerSet's replicas as Kueue queues them: one Workload each, pods in its group.

A LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``) runs ``spec.replicas``
groups of ``spec.leaderWorkerTemplate.size`` pods (both default to 1): a
leader (from ``leaderTemplate`` when there is one) and its workers
(``workerTemplate``).  Kueue queues each group on its own:

- **pod sets**: with a leader template, ``leader`` (1 pod, the leader
  template) and ``worker`` (``size - 1`` pods, the worker template); without
  one, ``main`` (``size`` pods, the worker template).  The templates lose
  the LeaderWorkerSet controller's own labels and annotations
  (``leaderworkerset.sigs.k8s.io/*``, its name label excepted);
- **a Workload per group index** ``i`` in ``0 .. replicas - 1`` (more
  during a rolling update with ``maxSurge``, as long as the status counts
  more replicas than the spec), named ``leaderworkerset-<name>-<i>-<hash>``
  by Kueue's naming rule (the hash covers the LeaderWorkerSet's UID), owned
  by the LeaderWorkerSet, labelled with its UID, marked as a group's
  Workload, with the LeaderWorkerSet's queue name and priority;
- **each pod** its controller makes (gated by the webhook, since the
  templates were marked) joins the group of its ``group-index`` label: the
  managed label, the group name and the prebuilt Workload name (both that
  Workload's name), the group's size, and its role: the pod set it belongs
  to (``leader`` for the pod without a ``leader-name`` annotation, else
  ``worker``; ``main`` without a leader template).

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
    POD_SUSPENDING_PARENT_ANNOTATION,
    QUEUE_NAME_LABEL,
)
from scheduler.jobs import pod_template
from scheduler.jobs.group_workloads import group_workload, group_workload_spec, into_group
from scheduler.jobs.pod.pods import is_gated
from scheduler.jobs.workload_from_job import (
    PriorityClasses,
    workload_name,
)

FRAMEWORK: Final = "leaderworkerset.x-k8s.io/leaderworkerset"
API_VERSION: Final = "leaderworkerset.x-k8s.io/v1"
KIND: Final = "LeaderWorkerSet"
GROUP: Final = "leaderworkerset.x-k8s.io"
DOMAIN: Final = "leaderworkerset.sigs.k8s.io"
NAME_LABEL: Final = f"{DOMAIN}/name"
GROUP_INDEX_LABEL: Final = f"{DOMAIN}/group-index"
LEADER_NAME_ANNOTATION: Final = f"{DOMAIN}/leader-name"
LEADER, WORKER, MAIN = "leader", "worker", "main"
COMPONENT_INDEX_ANNOTATION: Final = "kueue.x-k8s.io/component-workload-index"

_mapping = pod_template.mapping


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _template(lws: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_mapping(lws.get("spec")).get("leaderWorkerTemplate"))


def size(lws: Mapping[str, Any]) -> int:
    """Pods per group (``leaderWorkerTemplate.size``, default 1): pure."""
    return _int(_template(lws).get("size"), 1)


def spec_replicas(lws: Mapping[str, Any]) -> int:
    """``spec.replicas`` (default 1): pure."""
    return _int(_mapping(lws.get("spec")).get("replicas"), 1)


def has_leader_template(lws: Mapping[str, Any]) -> bool:
    return isinstance(_template(lws).get("leaderTemplate"), Mapping)


def _surging(lws: Mapping[str, Any]) -> bool:
    """A rolling update with ``maxSurge`` above 0 that has not updated every replica: pure.

    ``maxSurge`` is read as Kueue reads it (an integer, or a string of
    digits; a percentage counts as 0).
    """
    rollout = _mapping(_mapping(lws.get("spec")).get("rolloutStrategy"))
    configuration = rollout.get("rollingUpdateConfiguration")
    if not isinstance(configuration, Mapping):
        return False
    surge = configuration.get("maxSurge")
    if isinstance(surge, str):
        surge = int(surge) if surge.isdigit() else 0
    updated = _int(objects.status(lws).get("updatedReplicas"), 0)
    return _int(surge, 0) > 0 and updated < spec_replicas(lws)


def replica_count(lws: Mapping[str, Any]) -> int:
    """How many groups need a Workload now: ``spec.replicas``, or the status's count while a
    rolling update surges above it: pure."""
    replicas = spec_replicas(lws)
    in_status = _int(objects.status(lws).get("replicas"), 0)
    return in_status if in_status > replicas and _surging(lws) else replicas


def _pod_set(name: str, count: int, template: Mapping[str, Any]) -> dict[str, Any]:
    """One pod set; the template without the LeaderWorkerSet controller's keys: pure."""
    copied = copy.deepcopy(dict(template))
    metadata = copied.get("metadata")
    if isinstance(metadata, dict):
        for field in ("labels", "annotations"):
            entries = metadata.get(field)
            if not isinstance(entries, dict):
                continue
            kept = {
                key: value
                for key, value in entries.items()
                if not key.startswith(DOMAIN) or key == NAME_LABEL
            }
            if kept:
                metadata[field] = kept
            else:
                del metadata[field]
    return {"name": name, "count": count, "template": copied}


def pod_sets(lws: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pod sets of every group of the LeaderWorkerSet: pure."""
    template = _template(lws)
    workers = _mapping(template.get("workerTemplate"))
    if has_leader_template(lws):
        return [
            _pod_set(LEADER, 1, _mapping(template.get("leaderTemplate"))),
            _pod_set(WORKER, size(lws) - 1, workers),
        ]
    return [_pod_set(MAIN, size(lws), workers)]


def group_workload_name(lws: Mapping[str, Any], index: int | str) -> str:
    """The Workload (and pod group) name of group ``index``: pure."""
    return workload_name(
        f"{objects.name(lws)}-{index}", objects.uid(lws) or "", kind=KIND, group=GROUP
    )


def replica_workloads(
    lws: Mapping[str, Any], *, priority_classes: PriorityClasses | None = None
) -> dict[str, dict[str, Any]]:
    """Workload name -> the Workload of each group the LeaderWorkerSet runs now: pure."""
    spec = group_workload_spec(lws, pod_sets(lws), priority_classes)
    workloads = {}
    for index in range(replica_count(lws)):
        name = group_workload_name(lws, index)
        workloads[name] = group_workload(
            lws,
            name=name,
            api_version=API_VERSION,
            kind=KIND,
            spec=spec,
            annotations={COMPONENT_INDEX_ANNOTATION: str(index)},
        )
    return workloads


def owner_of_pod(pod: Mapping[str, Any]) -> str | None:
    """The LeaderWorkerSet a pod belongs to (its name label): pure."""
    return objects.label(pod, NAME_LABEL) or None


def pod_role(lws: Mapping[str, Any], pod: Mapping[str, Any]) -> str:
    """The pod set of a pod of the LeaderWorkerSet: pure."""
    if not has_leader_template(lws):
        return MAIN
    return WORKER if objects.annotation(pod, LEADER_NAME_ANNOTATION) else LEADER


def place_pod(lws: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of a gated pod of the LeaderWorkerSet in its group's pod group, or None: pure.

    None for a pod that is not the LeaderWorkerSet's or not held back by
    kuota (not gated, or not marked by its template), that is already in a
    group, or whose group index its controller has not written yet.
    """
    index = objects.label(pod, GROUP_INDEX_LABEL)
    if (
        owner_of_pod(pod) != objects.name(lws)
        or objects.annotation(pod, POD_SUSPENDING_PARENT_ANNOTATION) != FRAMEWORK
        or objects.label(pod, MANAGED_LABEL) == MANAGED_LABEL_VALUE
        or not is_gated(pod)
        or not index
    ):
        return None
    queue = objects.queue_name(lws)
    return into_group(
        pod,
        group=group_workload_name(lws, index),
        total=size(lws),
        role=pod_role(lws, pod),
        labels={QUEUE_NAME_LABEL: queue} if queue else {},
    )


__all__ = [
    "FRAMEWORK",
    "group_workload_name",
    "owner_of_pod",
    "place_pod",
    "pod_sets",
    "replica_count",
    "replica_workloads",
]
