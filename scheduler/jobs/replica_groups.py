"""What an object of a kind with replica groups needs next: its Workloads and its pods (pure).

A kind with :class:`~scheduler.jobs.protocol.ReplicaGroups` (Kueue's
LeaderWorkerSet) is queued one replica at a time: each replica is a pod
group with a Workload of its own, made from the object.  The controller's
part for the object itself is this one decision, carried out by the
scheduler (``scheduler.kube.job_reconciler``); the pods of each group are
then admitted, started and stopped by the pod groups
(:mod:`scheduler.jobs.pod.group`).  As Kueue's reconciler for the kind:

- a queued object (one naming a queue or, with ``manageJobsWithoutQueueName``
  and a kind that allows it, one whose template the webhook marked all the same:
  its Workload then names no queue and waits) gets the Workloads its kind says
  it should have now (one per replica); a Workload it owns that it should no longer have (the object
  was scaled down) is deleted;
- a Workload whose queue name or WorkloadPriorityClass is no longer the
  object's is updated to them (its pod sets are not: the validating webhook
  keeps what they were made from unchanged while the object is queued);
- each of its pods still waiting outside a group is put into its replica's;
- an object that is not queued, or is being deleted, is left alone (its
  Workloads go with it, by owner reference);
- a kind whose Workload outlives a scale to zero (:class:`~scheduler.jobs.protocol.HoldAtZero`,
  a StatefulSet) never has one deleted for want of replicas: scaled to zero,
  an admitted one gives its quota back and is put on hold; scaled up again,
  the hold comes off.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.api import objects
from scheduler.jobs.actions import CreateWorkload
from scheduler.jobs.protocol import HoldAtZero, ReplicaGroups
from scheduler.jobs.workload_from_job import PriorityClasses


@dataclass(frozen=True, slots=True)
class ReplaceWorkload:
    """A replica's Workload with the owner's queue name and priority class now."""

    workload: dict[str, Any]
    """The Workload as read (its resourceVersion guards the write)."""
    updated: dict[str, Any]
    difference: str


@dataclass(frozen=True, slots=True)
class RemoveWorkload:
    """The Workload of a replica the owner no longer has."""

    workload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PlacePods:
    """Put pods into their replica's group: ``(pod as read, pod placed)`` pairs."""

    pods: tuple[tuple[dict[str, Any], dict[str, Any]], ...]


@dataclass(frozen=True, slots=True)
class HoldWorkload:
    """Give the Workload's quota back and keep it on hold (``QuotaReserved=False``, ``OnHold``)."""

    workload: dict[str, Any]
    message: str


@dataclass(frozen=True, slots=True)
class ReleaseHold:
    """Take the hold off the Workload: it queues again."""

    workload: dict[str, Any]


ReplicaAction = (
    CreateWorkload | ReplaceWorkload | RemoveWorkload | PlacePods | HoldWorkload | ReleaseHold
)


def _followed_fields(workload: Mapping[str, Any]) -> tuple[object, object]:
    spec = objects.spec(workload)
    reference = spec.get("priorityClassRef")
    name = reference.get("name") if isinstance(reference, Mapping) else None
    return spec.get("queueName"), name


def _replaced(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> ReplaceWorkload | None:
    """``current`` brought to ``wanted``'s queue name and priority class, None when it is."""
    queue, priority_class = _followed_fields(current)
    wanted_queue, wanted_class = _followed_fields(wanted)
    differences = []
    if queue != wanted_queue:
        differences.append(f"queue name {queue or '-'} -> {wanted_queue or '-'}")
    if priority_class != wanted_class:
        differences.append(f"priority class {priority_class or '-'} -> {wanted_class or '-'}")
    if not differences:
        return None
    updated = copy.deepcopy(dict(current))
    spec = updated.setdefault("spec", {})
    wanted_spec = objects.spec(wanted)
    for field in ("queueName", "priorityClassRef", "priority"):
        if field in wanted_spec:
            spec[field] = copy.deepcopy(wanted_spec[field])
        elif field != "priority":  # a class not known yet keeps the value it had
            spec.pop(field, None)
    return ReplaceWorkload(dict(current), updated, ", ".join(differences))


def next_replica_actions(
    kind: ReplicaGroups,
    obj: Mapping[str, Any],
    workloads: Sequence[Mapping[str, Any]],
    unplaced_pods: Sequence[Mapping[str, Any]],
    *,
    priority_classes: PriorityClasses | None = None,
    without_queue_name: bool = False,
) -> list[ReplicaAction]:
    """Everything the object needs now, in order: Workloads first, then its pods (pure).

    ``workloads``: the Workloads it owns; ``unplaced_pods``: its pods the
    scheduler sees outside any group; ``without_queue_name``: the Configuration's
    ``manageJobsWithoutQueueName``.
    """
    if not kind.queued(obj, without_queue_name=without_queue_name):
        return []
    if objects.is_being_deleted(obj):
        return []
    wanted = kind.replica_workloads(obj, priority_classes=priority_classes)
    owned = {objects.name(workload): workload for workload in workloads}
    actions: list[ReplicaAction] = []
    for name, workload in wanted.items():
        current = owned.get(name)
        if current is None:
            actions.append(CreateWorkload(workload))
        elif not objects.is_being_deleted(current):
            replaced = _replaced(current, workload)
            if replaced is not None:
                actions.append(replaced)
    holds = kind if isinstance(kind, HoldAtZero) else None
    for name, held in owned.items():
        if objects.is_being_deleted(held):
            continue
        if holds is None:
            if name not in wanted:
                actions.append(RemoveWorkload(dict(held)))
        elif holds.should_hold(obj, held):
            actions.append(HoldWorkload(dict(held), holds.hold_message))
        elif holds.should_release_hold(obj, held):
            actions.append(ReleaseHold(dict(held)))
    placed = tuple(
        (dict(pod), moved)
        for pod in unplaced_pods
        if (moved := kind.place_pod(obj, pod)) is not None
    )
    if placed:
        actions.append(PlacePods(placed))
    return actions
