"""Pod groups: pods labelled ``kueue.x-k8s.io/pod-group-name`` queued as one Workload (pure).

A group is the managed Pods of one namespace with the same group name; its
size is the ``kueue.x-k8s.io/pod-group-total-count`` annotation.  As in Kueue:

- its Workload is named after the group, owned by every pod of it, and made
  only once all ``total`` pods exist (failed ones not counted);
- its pod sets are the pods' roles (:func:`~scheduler.jobs.pod.integration.pod_role`):
  one pod set per distinct role hash, named by it, counting the pods of
  that role, sorted by name;
- admission is all or nothing: every pod stays gated until the Workload is
  admitted, then every gate comes off, each pod steered to its role's
  flavor;
- an eviction deletes the running pods (``TerminationTarget`` first) and
  gives the quota back once none runs or terminates (a pod in its grace
  period still holds its node);
- once it has its Workload, a failed or deleted pod keeps kuota's finalizer
  until another pod of its role replaces it, pods beyond the Workload's
  counts are deleted, a replacement joins the Workload's owners, and the
  Workload's ``WaitingForReplacementPods`` says whether pods are missing
  (:mod:`.replacement`; not for a fast-admission group nor one with a
  prebuilt Workload, whose pods lose the finalizer when deleted);
- the group has finished when ``total`` pods succeeded (``Pods succeeded:
  n/total.``), and kuota's finalizers then come off its pods; a pod being
  deleted before the group has its Workload loses its finalizer at once;
- while it runs, its succeeded pods give their quota back
  (``status.reclaimablePods``, per role; not for a serving group), as Kueue's
  ``ReclaimablePods`` for pod groups;
- the Workload carries the labels ``integrations.labelKeysToCopy`` lists, from
  the pods, and the labels and annotations the Workload custom metric labels
  read (the pods must agree on each value; the Workload waits otherwise);
- a group marked ``kueue.x-k8s.io/pod-group-fast-admission`` (a
  StatefulSet's) gets its Workload from its first pod, one pod set of
  ``total`` pods, owned by the pods' controller; pods created later are
  ungated as they come; marked ``kueue.x-k8s.io/pod-group-serving`` it never
  finishes;
- a group whose pods name a prebuilt Workload
  (``kueue.x-k8s.io/prebuilt-workload-name``: a replica of a kind with
  replica groups, whose Workload the scheduler makes from its owner) never
  gets one made from its pods: it waits for that one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.custom_labels import NOTHING_COPIED, CopiedMetadata
from scheduler.api.refs import (
    EVICTED,
    IS_GROUP_WORKLOAD_ANNOTATION,
    POD_GROUP_FAST_ADMISSION_ANNOTATION,
    POD_GROUP_NAME_LABEL,
    POD_GROUP_SERVING_ANNOTATION,
    POD_GROUP_TOTAL_COUNT_ANNOTATION,
)
from scheduler.jobs.actions import (
    Action,
    CreateWorkload,
    DeactivateWorkload,
    FinalizePods,
    FinishWorkload,
    GroupAction,
    OwnWorkload,
    ReleaseWorkload,
    RemoveExcessPods,
    SetWaitingForReplacement,
    StartPods,
    StopPods,
    WaitForFlavor,
)
from scheduler.jobs.pod.pods import (
    has_finalizer,
    is_gated,
    is_managed,
    is_terminated,
    pod_role,
    pod_set,
    started,
    without_finalizer,
)
from scheduler.jobs.pod.replacement import measure, missing_owners, replacement_condition
from scheduler.jobs.propagation import reclaimable_update
from scheduler.jobs.protocol import FinishedState, RawObject, ReclaimableCount
from scheduler.jobs.start_placement import FlavorPlacement, placement
from scheduler.jobs.workload_from_job import PriorityClasses, workload_from_job

GROUP_KEY_PREFIX: Final = "podgroup/"
"""Keys of pod groups among the scheduler's job keys (a Job's key is its UID)."""


def group_name(pod: RawObject) -> str:
    """The pod's group, ``""`` when none: pure.

    The annotation ``kueue.x-k8s.io/pod-group-name`` (where Kueue v0.19 writes
    it, as kuota does for the groups it forms), else the label of that key.
    """
    return (
        objects.annotation(pod, POD_GROUP_NAME_LABEL) or objects.label(pod, POD_GROUP_NAME_LABEL)
    ) or ""


def group_key(namespace: str, name: str) -> str:
    return f"{GROUP_KEY_PREFIX}{namespace}/{name}"


def group_key_of_pod(pod: RawObject) -> str | None:
    """The key of the group a managed pod belongs to, None for a single pod: pure."""
    name = group_name(pod)
    return group_key(objects.namespace(pod) or "", name) if name else None


def group_key_of_workload(workload: RawObject) -> str | None:
    """A group Workload's group key (annotation ``kueue.x-k8s.io/is-group-workload``): pure."""
    if objects.annotation(workload, IS_GROUP_WORKLOAD_ANNOTATION) != "true":
        return None
    return group_key(objects.namespace(workload) or "", objects.name(workload))


def owned_by_single_pod(workload: RawObject) -> bool:
    """Whether a Workload is a single Pod's (its only owner a ``v1`` Pod, not a group): pure.

    Such a Workload cannot outlive its pod, and the pod cannot move to
    another node (docs/concepts.md#topology-aware-scheduling).
    """
    owners = objects.owner_references(workload)
    if len(owners) != 1 or group_key_of_workload(workload) is not None:
        return False
    return owners[0].get("kind") == "Pod" and owners[0].get("apiVersion") == "v1"


def _flag(pods: Sequence[RawObject], key: str) -> bool:
    return any(objects.annotation(pod, key) == "true" for pod in pods)


def total_count(pods: Sequence[RawObject]) -> int | None:
    """The group's size from the first pod with a valid annotation: pure."""
    for pod in pods:
        value = objects.annotation(pod, POD_GROUP_TOTAL_COUNT_ANNOTATION)
        if value is not None and value.isdigit() and int(value) > 0:
            return int(value)
    return None


def _counted(pod: RawObject) -> bool:
    """Runnable or succeeded: not failed, not being deleted (Kueue's isPodRunnableOrSucceeded)."""
    return objects.status(pod).get("phase") != "Failed" and not objects.is_being_deleted(pod)


def group_pod_sets(pods: Sequence[RawObject], *, total: int | None = None) -> list[dict[str, Any]]:
    """One pod set per role, counting its pods, sorted by role: pure.

    With ``total`` (fast admission), one pod set of the first counted pod's
    role and spec, of ``total`` pods.
    """
    if total is not None:
        first = next((pod for pod in sorted(pods, key=objects.name) if _counted(pod)), None)
        if first is None:
            return []
        return [pod_set(first, pod_role(first), total)]
    by_role: dict[str, dict[str, Any]] = {}
    for pod in sorted(pods, key=lambda p: objects.name(p)):
        if not _counted(pod):
            continue
        role = pod_role(pod)
        if role in by_role:
            by_role[role]["count"] += 1
        else:
            by_role[role] = pod_set(pod, role, 1)
    return [by_role[role] for role in sorted(by_role)]


def agreed_values(
    pods: Sequence[RawObject],
    keys: Collection[str],
    read: Callable[[RawObject], Mapping[str, str]],
) -> dict[str, str] | None:
    """The entries of ``keys`` the pods carry (``read``: their labels or annotations), None
    when two pods disagree on one: pure."""
    found: dict[str, str] = {}
    for pod in pods:
        labels = read(pod)
        for key in sorted(set(keys)):
            if key not in labels:
                continue
            if key in found and found[key] != labels[key]:
                return None
            found[key] = labels[key]
    return found


def group_reclaimable(pods: Sequence[RawObject]) -> list[ReclaimableCount]:
    """Succeeded pods per role (Kueue's ``ReclaimablePods`` of a pod group): pure."""
    counts: dict[str, int] = {}
    for pod in pods:
        if objects.status(pod).get("phase") == "Succeeded":
            role = pod_role(pod)
            counts[role] = counts.get(role, 0) + 1
    return [ReclaimableCount(role, count) for role, count in sorted(counts.items())]


def group_workload(
    pods: Sequence[RawObject],
    priority_classes: PriorityClasses | None = None,
    *,
    total: int | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The group's Workload: named after the group, owned by each of its pods: pure.

    ``total``: fast admission (a StatefulSet's pods): sized by the total
    count, owned by the pods' controller (the StatefulSet), which outlives them.
    ``labels``, ``annotations``: what of the pods' metadata the Workload copies.
    """
    ordered = sorted(pods, key=lambda p: objects.name(p))
    first = ordered[0]
    workload = workload_from_job(
        first,
        priority_classes=priority_classes,
        pod_sets=group_pod_sets(ordered, total=total),
    )
    metadata = workload["metadata"]
    metadata["name"] = group_name(first)
    metadata.pop("labels", None)
    if labels:
        metadata["labels"] = dict(labels)
    metadata["annotations"] = {
        **metadata.get("annotations", {}),
        **(annotations or {}),
        IS_GROUP_WORKLOAD_ANNOTATION: "true",
    }
    controller = objects.controller_reference(first)
    if total is not None and controller is not None:
        metadata["ownerReferences"] = [{**dict(controller), "blockOwnerDeletion": True}]
        return workload
    metadata["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": objects.name(pod),
            "uid": objects.uid(pod) or "",
            "blockOwnerDeletion": True,
        }
        for pod in ordered
        if _counted(pod)
    ]
    return workload


def group_finished(pods: Sequence[RawObject], total: int) -> FinishedState:
    """Kueue's rule: ``total`` pods succeeded: pure."""
    succeeded = sum(1 for pod in pods if objects.status(pod).get("phase") == "Succeeded")
    if succeeded >= total:
        return FinishedState(True, "Succeeded", f"Pods succeeded: {succeeded}/{total}.")
    return FinishedState(False)


def _finalize(pods: Sequence[RawObject]) -> Action | FinalizePods | None:
    pending = tuple((dict(pod), without_finalizer(pod)) for pod in pods if has_finalizer(pod))
    return FinalizePods(pending) if pending else None


def _holds_node(pod: RawObject) -> bool:
    """Not terminated, and not deleted with no grace period left to run in: pure.

    A pod deleted with a grace period of 0 (forced, or by a node agent that
    stopped it) no longer runs, though kuota's finalizer keeps it listed.
    """
    if is_terminated(pod):
        return False
    grace = objects.metadata(pod).get("deletionGracePeriodSeconds")
    return not (objects.is_being_deleted(pod) and grace == 0)


def _running(pods: Sequence[RawObject]) -> tuple[dict[str, Any], ...]:
    return tuple(
        dict(pod)
        for pod in pods
        if not objects.is_being_deleted(pod) and not is_gated(pod) and not is_terminated(pod)
    )


def _replacement(pods: Sequence[RawObject], workload: Mapping[str, Any]) -> GroupAction | None:
    """Failed pods kept until replaced, excess ones removed, owners and the
    ``WaitingForReplacementPods`` condition kept current (:mod:`.replacement`): pure."""
    found = measure(pods, workload)
    stray = [pod for pod in found.unknown if objects.is_being_deleted(pod)]
    for done in (stray, found.replaced):
        if (finalize := _finalize(done)) is not None:
            return finalize
    excess = [p for p in found.excess if has_finalizer(p) or not objects.is_being_deleted(p)]
    if excess:
        return RemoveExcessPods(tuple((dict(pod), without_finalizer(pod)) for pod in excess))
    owners = missing_owners(workload, found.kept)
    if owners:
        updated = copy.deepcopy(dict(workload))
        metadata = updated.setdefault("metadata", {})
        metadata["ownerReferences"] = [*list(metadata.get("ownerReferences") or []), *owners]
        return OwnWorkload(updated)
    wanted = replacement_condition(workload, found.absent)
    return SetWaitingForReplacement(*wanted) if wanted is not None else None


def next_group_action(
    pods: Sequence[RawObject],
    workload: Mapping[str, Any] | None,
    *,
    flavors: Mapping[str, FlavorPlacement],
    priority_classes: PriorityClasses | None = None,
    copied: CopiedMetadata = NOTHING_COPIED,
) -> GroupAction | None:
    """The one thing to do for a pod group now, or None (pure)."""
    members = [pod for pod in pods if is_managed(pod) and objects.queue_name(pod)]
    total = total_count(members)
    if not members or total is None:
        return None
    serving = _flag(members, POD_GROUP_SERVING_ANNOTATION)
    fast = _flag(members, POD_GROUP_FAST_ADMISSION_ANNOTATION)
    replaceable = (
        workload is not None
        and not fast
        and not objects.is_finished(workload)
        and not any(objects.prebuilt_workload_name(pod) for pod in members)
    )
    deleting = [pod for pod in members if objects.is_being_deleted(pod)]
    if not replaceable and deleting and (finalize := _finalize(deleting)) is not None:
        return finalize
    finished = FinishedState(False) if serving else group_finished(members, total)
    if finished.finished:
        if workload is not None and not objects.is_finished(workload):
            return FinishWorkload(finished.reason, finished.message)
        return _finalize(members)
    if workload is None:
        if any(objects.prebuilt_workload_name(pod) for pod in members):
            return None  # the group's Workload is made by the pods' owner: it waits for it
        if sum(1 for pod in members if _counted(pod)) < (1 if fast else total):
            return None  # Kueue waits for every pod of the group (for one, fast admission)
        labels = agreed_values(members, copied.labels, objects.labels)
        annotations = agreed_values(members, copied.annotations, objects.annotations)
        if labels is None or annotations is None:
            return None  # the pods disagree on a value to copy (Kueue: no Workload either)
        return CreateWorkload(
            group_workload(
                members,
                priority_classes,
                total=total if fast else None,
                labels=labels,
                annotations=annotations,
            )
        )
    if objects.is_finished(workload):
        return _finalize(members)
    if replaceable and (replacing := _replacement(members, workload)) is not None:
        return replacing
    if not serving:
        reclaim = reclaimable_update(workload, group_reclaimable(members))
        if reclaim is not None:
            return reclaim
    holds_quota = objects.has_quota_reservation(workload)
    evicting = objects.is_evicting(workload)
    if objects.is_deactivated(workload) and holds_quota and not evicting:
        return DeactivateWorkload()
    running = _running(members)
    if evicting:
        if not running:
            if any(_holds_node(pod) for pod in members if not is_gated(pod)):
                return None  # stopping: the quota stays until the last pod has gone
            return ReleaseWorkload()
        evicted = objects.condition(workload, EVICTED) or {}
        reason = f"WorkloadEvictedDueTo{evicted.get('reason') or 'Evicted'}"
        return StopPods(running, reason, str(evicted.get("message", "")))
    if holds_quota:
        gated = [
            pod
            for pod in members
            if is_gated(pod) and not objects.is_being_deleted(pod) and not is_terminated(pod)
        ]
        if not gated:
            return None
        infos = placement(workload, flavors, objects.queue_name(members[0]))
        if isinstance(infos, WaitForFlavor):
            return infos
        by_role = {info.name: info for info in infos}
        return StartPods(
            tuple((dict(pod), started(pod, by_role.get(pod_role(pod)))) for pod in gated),
            objects.admitted_cluster_queue(workload),
        )
    if running:
        return StopPods(running, "NotAdmitted", "Not admitted by cluster queue")
    return None
