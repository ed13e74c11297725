"""A pod group's pods measured against its Workload: failed ones kept until replaced,
excess ones removed (pure).

See docs/concepts.md#pod-groups.  Once a group has its Workload, each of
its pod sets (a role) wants ``count`` pods.  As in Kueue, a pod is *active*
while it can still run or has succeeded: not ``Failed``, and not being
deleted before it was ever bound to a node.  Per role:

- an inactive pod keeps kuota's finalizer, so it stays visible (``Failed``)
  until another pod takes its place; once the active pods fill the role,
  the inactive ones beyond that lose the finalizer (:attr:`Measure.replaced`);
- active pods beyond ``count`` are excess: the last created (gated ones and
  ones without the finalizer first) are deleted (:attr:`Measure.excess`);
- the pods missing (``count`` less the active ones) are *absent*: the
  Workload says so with ``WaitingForReplacementPods``.

The kept pods own the Workload (a replacement is added to its owners), so
it outlives the pods it was made from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import WAITING_FOR_REPLACEMENT_PODS
from scheduler.jobs.pod.pods import has_finalizer, is_gated, pod_role

RawObject = Mapping[str, Any]

PODS_FAILED: Final = "PodsFailed"
PODS_FAILED_MESSAGE: Final = "Some Failed pods need replacement"
PODS_READY: Final = "PodsReady"
PODS_READY_MESSAGE: Final = "No pods need replacement"


def is_active(pod: RawObject) -> bool:
    """Can still run, runs, or succeeded (Kueue's isPodRunnableOrSucceeded): pure."""
    if objects.is_being_deleted(pod) and not objects.spec(pod).get("nodeName"):
        return False
    return objects.status(pod).get("phase") != "Failed"


@dataclass(frozen=True, slots=True)
class Measure:
    """The group's pods against its Workload's pod sets (module docstring)."""

    kept: tuple[RawObject, ...]
    replaced: tuple[RawObject, ...]
    excess: tuple[RawObject, ...]
    absent: int
    unknown: tuple[RawObject, ...]
    """Pods of a role the Workload does not have."""


def _active_order(pod: RawObject) -> tuple[bool, bool, str, str]:
    """Kept first: with the finalizer, not gated, created first: pure."""
    return (not has_finalizer(pod), is_gated(pod), _created(pod), _name(pod))


def _inactive_sorted(pods: list[RawObject]) -> list[RawObject]:
    """Kept first: with the finalizer, then the last to have been active, then the older: pure.

    A pod's last active time is when it was deleted; one not deleted is
    taken as active now.
    """
    ordered = sorted(pods, key=lambda pod: (_created(pod), _name(pod)))
    ordered.sort(
        key=lambda pod: str(objects.metadata(pod).get("deletionTimestamp") or "\uffff"),
        reverse=True,
    )
    ordered.sort(key=lambda pod: not has_finalizer(pod))
    return ordered


def _name(pod: RawObject) -> str:
    return objects.name(pod)


def _created(pod: RawObject) -> str:
    """The RFC 3339 creation time, which sorts as text: pure."""
    return str(objects.metadata(pod).get("creationTimestamp") or "")


def measure(pods: Sequence[RawObject], workload: RawObject) -> Measure:
    """Which pods are kept, replaced, excess; how many are absent (module docstring): pure."""
    counts = {
        str(pod_set.get("name", "")): int(pod_set.get("count") or 0)
        for pod_set in objects.spec(workload).get("podSets") or []
        if isinstance(pod_set, Mapping)
    }
    by_role: dict[str, list[RawObject]] = {}
    unknown: list[RawObject] = []
    for pod in pods:
        role = pod_role(pod)
        if role in counts:
            by_role.setdefault(role, []).append(pod)
        else:
            unknown.append(pod)
    kept: list[RawObject] = []
    replaced: list[RawObject] = []
    excess: list[RawObject] = []
    absent = 0
    for role, count in counts.items():
        members = by_role.get(role, [])
        active = sorted((p for p in members if is_active(p)), key=_active_order)
        inactive = _inactive_sorted([p for p in members if not is_active(p)])
        absent += max(0, count - len(active))
        kept += active[:count]
        excess += active[count:]
        finalizable = min(len(inactive), len(inactive) + len(active) - count)
        if finalizable > 0:
            kept += inactive[: len(inactive) - finalizable]
            replaced += inactive[len(inactive) - finalizable :]
        else:
            kept += inactive
    return Measure(tuple(kept), tuple(replaced), tuple(excess), absent, tuple(unknown))


def missing_owners(workload: RawObject, kept: Sequence[RawObject]) -> list[dict[str, Any]]:
    """Owner references for kept pods the Workload does not list yet: pure."""
    owners = {str(o.get("uid")) for o in objects.metadata(workload).get("ownerReferences") or []}
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": objects.name(pod),
            "uid": objects.uid(pod) or "",
            "blockOwnerDeletion": True,
        }
        for pod in sorted(kept, key=_name)
        if (objects.uid(pod) or "") not in owners and objects.uid(pod)
    ]


def replacement_condition(workload: RawObject, absent: int) -> tuple[bool, str, str] | None:
    """``WaitingForReplacementPods`` as it should be now, None when unchanged: pure.

    True while pods are absent (the eviction's reason and message when the
    Workload is evicted, else ``PodsFailed``); False once none is, when the
    condition was ever set; never added while nothing is absent.
    """
    current = objects.condition(workload, WAITING_FOR_REPLACEMENT_PODS)
    if absent > 0:
        evicted = objects.condition(workload, "Evicted")
        if evicted is not None and evicted.get("status") == "True":
            wanted = (True, str(evicted.get("reason") or ""), str(evicted.get("message") or ""))
        elif current is not None and current.get("status") == "True":
            return None
        else:
            wanted = (True, PODS_FAILED, PODS_FAILED_MESSAGE)
    elif current is None or current.get("status") == "False":
        return None
    else:
        wanted = (False, PODS_READY, PODS_READY_MESSAGE)
    if current is not None and (
        current.get("status") == ("True" if wanted[0] else "False")
        and current.get("reason") == wanted[1]
        and current.get("message") == wanted[2]
    ):
        return None
    return wanted


__all__ = [
    "PODS_FAILED",
    "PODS_READY",
    "WAITING_FOR_REPLACEMENT_PODS",
    "Measure",
    "is_active",
    "measure",
    "missing_owners",
    "replacement_condition",
]
