"""Elastic jobs: a running job whose pod count changes (docs/concepts.md#elastic-jobs).

A job annotated ``kueue.x-k8s.io/elastic-job: "true"`` (with the gate
``ElasticJobsViaWorkloadSlices`` on, Kueue's default) may change its pod
count while it runs.  Kueue calls the Workloads of such a job *workload
slices*:

- a scale-down lowers the counts of the slice that holds the quota in
  place, and the engine then charges only the pods asked for
  (docs/scheduling.md#workload-usage): :func:`elastic_scale_down`;
- a scale-up makes a new slice for the whole new size that names the one
  it replaces (:func:`scale_up_slice`); the engine admits it in the old
  one's place and finishes the old one.  Meanwhile the job's new pods wait
  behind the scheduling gate ``kueue.x-k8s.io/elastic-job`` that every pod
  of a started elastic job carries: :func:`pods_to_ungate` lifts it for as
  many pods as the admitted slice counts;
- :func:`choose_slices` tells, from a job's Workloads, which one the job is
  decided by, which new slice waits to replace it, and which are left over
  (finished by the controller: replaced, or out of sync with the job).

Every function is pure.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import (
    ELASTIC_JOB_ANNOTATION,
    ELASTIC_JOB_GATE,
    POD_SET_LABEL,
    WORKLOAD_SLICE_NAME_ANNOTATION,
    WORKLOAD_SLICE_REPLACED,
    WORKLOAD_SLICE_REPLACEMENT_ANNOTATION,
)
from scheduler.jobs.pod_template import has_gate, without_gate
from scheduler.jobs.protocol import JobIntegration


@dataclass(frozen=True, slots=True)
class ScaleDownWorkload:
    """An elastic job running on its admission asks for fewer pods: lower its Workload's counts.

    ``workload`` is the Workload as read with the job's counts (its admission
    untouched); the write is guarded by the resourceVersion it was read at.
    """

    workload: dict[str, Any]
    difference: str


def elastic_scale_down(
    job: Mapping[str, Any], workload: Mapping[str, Any], integration: JobIntegration
) -> ScaleDownWorkload | None:
    """The Workload with the job's lower counts, when the job scaled down, else None: pure.

    A scale-down (Kueue's ``ScaledDown``) keeps the pod sets and their names,
    lowers at least one count and raises none.  The Workload is marked elastic
    on the way if it was made before the gate was on, as the Workload
    webhook allows a lower count only on an elastic Workload.
    """
    counts = _resized(job, workload, integration)
    if counts is None:
        return None
    recorded, before, after = counts
    if after == before or any(a > b for a, b in zip(after, before, strict=True)):
        return None
    pod_sets = [{**p, "count": count} for p, count in zip(recorded, after, strict=True)]
    updated = copy.deepcopy(dict(workload))
    updated["spec"] = {**objects.spec(workload), "podSets": pod_sets}
    annotations = updated.setdefault("metadata", {}).setdefault("annotations", {})
    annotations.setdefault(ELASTIC_JOB_ANNOTATION, "true")
    annotations.setdefault(WORKLOAD_SLICE_NAME_ANNOTATION, objects.name(workload))
    difference = ", ".join(
        f"pod set {p.get('name')}: count {b} -> {a}"
        for p, b, a in zip(recorded, before, after, strict=True)
        if a != b
    )
    return ScaleDownWorkload(updated, difference)


def _resized(
    job: Mapping[str, Any], workload: Mapping[str, Any], integration: JobIntegration
) -> tuple[list[Mapping[str, Any]], list[int], list[int]] | None:
    """An elastic job's pod sets as recorded, their counts, and the counts it asks for now;
    None when the job is not elastic or its pod sets are not the same ones: pure."""
    if objects.annotation(job, ELASTIC_JOB_ANNOTATION) != "true":
        return None
    recorded = [p for p in objects.spec(workload).get("podSets") or [] if isinstance(p, Mapping)]
    wanted = integration.pod_sets(job)
    if [str(p.get("name")) for p in wanted] != [str(p.get("name")) for p in recorded]:
        return None
    return recorded, [_count_of(p) for p in recorded], [_count_of(p) for p in wanted]


def _count_of(pod_set: Mapping[str, Any]) -> int:
    count = pod_set.get("count")
    return count if isinstance(count, int) and not isinstance(count, bool) else 1


@dataclass(frozen=True, slots=True)
class RetireSlice:
    """Finish a workload slice of an elastic job that no longer decides it.

    ``workload`` is the slice as read; ``reason`` is ``WorkloadSliceReplaced``
    (a newer slice took its quota over) or ``OutOfSync`` (a new slice the job
    no longer matches, or one left by a crash); docs/concepts.md#elastic-jobs.
    """

    workload: dict[str, Any]
    reason: str
    message: str


OUT_OF_SYNC = "OutOfSync"
OUT_OF_SYNC_MESSAGE = "The workload slice is out of sync with its parent job"
REPLACED_MESSAGE = "Replaced to accommodate a new workload slice"


@dataclass(frozen=True, slots=True)
class Slices:
    """A job's Workloads, sorted out (:func:`choose_slices`)."""

    current: Mapping[str, Any] | None
    """The Workload the job is decided by."""
    pending: Mapping[str, Any] | None = None
    """A new slice, without quota yet, that is to replace ``current``."""
    stale: tuple[tuple[Mapping[str, Any], str, str], ...] = ()
    """Unfinished slices to finish: (Workload, Finished reason, message)."""


def replaces(workload: Mapping[str, Any]) -> str | None:
    """The key of the slice ``workload`` is to replace, if it is a new slice: pure."""
    return objects.annotation(workload, WORKLOAD_SLICE_REPLACEMENT_ANNOTATION) or None


def choose_slices(workloads: Iterable[Mapping[str, Any]]) -> Slices:
    """Which of a job's Workloads decides it, which waits to replace it, which are done: pure.

    The current one is the newest that holds quota and whose replacement (if
    any) does not: a replacement that got quota takes over, and the slice it
    replaced is left over.  Without any holding quota, it is the oldest that
    replaces no other unfinished one.  Everything else unfinished is left
    over: ``WorkloadSliceReplaced`` when a newer slice replaced it, else
    ``OutOfSync`` (Kueue's reasons); only slices (Workloads marked elastic)
    are ever left over.
    """
    ordered = sorted(workloads, key=_age)
    if len(ordered) <= 1:
        return Slices(ordered[0] if ordered else None)
    unfinished = [w for w in ordered if not objects.is_finished(w)]
    if not unfinished:
        return Slices(ordered[-1])
    keys = {objects.key(w) for w in unfinished}
    replacement_of: dict[str, Mapping[str, Any]] = {}
    for workload in unfinished:
        old = replaces(workload)
        if old in keys and not objects.is_evicting(workload):
            known = replacement_of.get(old)
            if known is None or (
                objects.has_quota_reservation(workload) and not objects.has_quota_reservation(known)
            ):
                replacement_of[old] = workload
    heads = [
        w
        for w in unfinished
        if objects.has_quota_reservation(w)
        and not objects.has_quota_reservation(replacement_of.get(objects.key(w), {}))
    ]
    if heads:
        current = heads[-1]
    else:
        current = next(w for w in unfinished if replaces(w) not in keys)
    pending = replacement_of.get(objects.key(current))
    if pending is not None and objects.has_quota_reservation(pending):
        pending = None
    stale = tuple(
        (
            w,
            (WORKLOAD_SLICE_REPLACED, REPLACED_MESSAGE)
            if objects.key(w) in replacement_of
            else (OUT_OF_SYNC, OUT_OF_SYNC_MESSAGE),
        )
        for w in unfinished
        if w is not current
        and w is not pending
        and objects.annotation(w, ELASTIC_JOB_ANNOTATION) == "true"
    )
    return Slices(current, pending, tuple((w, r, m) for w, (r, m) in stale))


def _age(workload: Mapping[str, Any]) -> tuple[str, str]:
    created = objects.creation_time(workload)
    return (created.isoformat() if created is not None else "", objects.name(workload))


def scaled_up(
    job: Mapping[str, Any], workload: Mapping[str, Any], integration: JobIntegration
) -> bool:
    """Whether an elastic job asks for more pods than ``workload`` counts, and no fewer: pure.

    Only the counts may differ (the pod sets and their names stay), as for a
    scale-down.
    """
    counts = _resized(job, workload, integration)
    if counts is None:
        return False
    _, before, after = counts
    return after != before and all(a >= b for a, b in zip(after, before, strict=True))


def slice_name(job: Mapping[str, Any], base: str) -> str:
    """The name of a new slice: the job's Workload name with its generation: pure.

    The same generation always gives the same name, so a create repeated
    after a crash is a harmless "already exists".
    """
    generation = objects.metadata(job).get("generation")
    return f"{base[: 253 - 12]}-g{generation if isinstance(generation, int) else 0}"


def as_new_slice(fresh: Mapping[str, Any], current: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``fresh`` (the Workload made from the job now) as the slice replacing ``current``: pure."""
    result = copy.deepcopy(dict(fresh))
    metadata = result.setdefault("metadata", {})
    metadata["name"] = name
    annotations = metadata.setdefault("annotations", {})
    annotations[ELASTIC_JOB_ANNOTATION] = "true"
    annotations[WORKLOAD_SLICE_REPLACEMENT_ANNOTATION] = objects.key(current)
    annotations[WORKLOAD_SLICE_NAME_ANNOTATION] = objects.annotation(
        current, WORKLOAD_SLICE_NAME_ANNOTATION
    ) or objects.name(current)
    return result


def new_slice(
    job: Mapping[str, Any], current: Mapping[str, Any], fresh: Mapping[str, Any]
) -> dict[str, Any]:
    """The slice for a running elastic job's new size, replacing ``current``: pure.

    ``fresh``: the Workload made from the job as it is now.
    """
    return as_new_slice(fresh, current, slice_name(job, str(objects.name(fresh))))


def pending_slice_out_of_sync(
    job: Mapping[str, Any],
    current: Mapping[str, Any],
    pending: Mapping[str, Any] | None,
    integration: JobIntegration,
) -> RetireSlice | None:
    """A waiting new slice that no longer fits the job is finished: pure.

    It is, when the slice it is to replace no longer holds quota or is being
    evicted (the job stops; its Workload is requeued with the job's size), or
    when the job's size changed again (a new slice follows).
    """
    if pending is None:
        return None
    recorded = [p for p in objects.spec(pending).get("podSets") or [] if isinstance(p, Mapping)]
    wanted = integration.pod_sets(job)
    if (
        objects.has_quota_reservation(current)
        and not objects.is_evicting(current)
        and [(str(p.get("name")), _count_of(p)) for p in recorded]
        == [(str(p.get("name")), _count_of(p)) for p in wanted]
    ):
        return None
    return RetireSlice(dict(pending), OUT_OF_SYNC, OUT_OF_SYNC_MESSAGE)


def elastic_gated(pod: Mapping[str, Any]) -> bool:
    """Whether the pod still waits behind the elastic-job gate: pure."""
    return has_gate(pod, ELASTIC_JOB_GATE)


def without_elastic_gate(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod with the elastic-job gate lifted: pure."""
    return without_gate(pod, ELASTIC_JOB_GATE)


def pods_to_ungate(
    workload: Mapping[str, Any],
    gated: Sequence[Mapping[str, Any]],
    running: Mapping[str, int],
) -> list[Mapping[str, Any]]:
    """The gated pods of an elastic job that its admitted slice has room for: pure.

    ``gated``: the job's live pods behind the gate; ``running``: per pod set,
    its live pods without it.  Nothing while the slice is not ``Admitted``
    (admission checks pending) or is being evicted.  Oldest pods first.
    """
    if not objects.is_admitted(workload) or objects.is_evicting(workload):
        return []
    asked = {
        str(p.get("name")): _count_of(p)
        for p in objects.spec(workload).get("podSets") or []
        if isinstance(p, Mapping)
    }
    room = {  # a scaled-down slice is charged for the pods it asks for, not its admission's
        str(a.get("name", "main")): min(
            int(a.get("count") or 0), asked.get(str(a.get("name", "main")), 0)
        )
        for a in objects.pod_set_assignments(workload)
    }
    chosen: list[Mapping[str, Any]] = []
    for pod in sorted(gated, key=_age):
        pod_set = objects.label(pod, POD_SET_LABEL) or "main"
        if room.get(pod_set, 0) - running.get(pod_set, 0) > 0:
            running = {**running, pod_set: running.get(pod_set, 0) + 1}
            chosen.append(pod)
    return chosen


__all__ = [
    "RetireSlice",
    "ScaleDownWorkload",
    "Slices",
    "as_new_slice",
    "choose_slices",
    "elastic_gated",
    "elastic_scale_down",
    "new_slice",
    "pending_slice_out_of_sync",
    "pods_to_ungate",
    "replaces",
    "scaled_up",
    "slice_name",
    "without_elastic_gate",
]
