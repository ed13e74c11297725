"""Does a Workload still describe its Job?  (Kueue's ``EquivalentToWorkload``)

A Workload is built from its Job once, at creation; the scheduler charges
quota and chooses flavors from the Workload's pod sets, never from the Job.
So whenever the Job changes in a way the quota or the flavor choice depends
on, the Workload must follow, or a tenant could run what was not charged
(more pods, other resources, nodes of a flavor that was never assigned).

:func:`pod_sets_difference` compares the pod sets the Job asks for now with
the ones the Workload records, field by field, and names the first
difference (``None``: equivalent).  Compared, per pod set in order: the name,
``count``, ``minCount`` and, in the pod template, ``containers`` and
``initContainers`` (resources compared by quantity, so ``"1"`` equals
``"1000m"``) and ``tolerations``, as Kueue does; kuota also compares
``nodeSelector`` and ``affinity``, because flavor assignment reads them
(docs/scheduling.md#flavor-eligibility): a nodeSelector added to a pending Job must make the
flavors it excludes ineligible, which only a rebuilt Workload can tell the
scheduler.  Kueue v0.19 leaves those two out and finds the conflict only when
it starts the Job (the Workload then finishes as ``FailedToStart``).

A Job that has been started carries what the admission added: the flavors'
node labels in its ``nodeSelector``, the flavors' tolerations, and a count
cut to the admitted one under partial admission.  With ``placed`` (the
placement of each admitted pod set) that running form is equivalent too, and
tolerations are not compared, as in Kueue for an admitted Workload.

Env variables named twice in the Job are compared as the Workload records
them, once each (Kueue sanitizes them so when it builds the Workload).

Empty and absent are the same (``nodeSelector: {}`` is no nodeSelector), as
the API server's ``omitempty`` makes them.  Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.api.quantity import Quantity, QuantityError
from scheduler.jobs.pod_template import without_duplicate_env
from scheduler.jobs.protocol import PodSetInfo

TEMPLATE_FIELDS = ("containers", "initContainers", "tolerations", "nodeSelector", "affinity")
"""The pod-spec fields compared, in the order a difference is reported."""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _quantity(value: object) -> object:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        try:
            return Quantity.parse(value).nanos
        except (QuantityError, ValueError, TypeError):
            return value
    return value


def canonical(value: object, *, parent: str = "") -> object:
    """``value`` with empty fields dropped and resource quantities as numbers: pure."""
    if isinstance(value, Mapping):
        result: dict[str, object] = {}
        for key, item in value.items():
            if parent in ("requests", "limits"):
                item = _quantity(item)
            else:
                item = canonical(item, parent=str(key))
            if item is None or item == {} or item == []:
                continue
            result[str(key)] = item
        return result
    if isinstance(value, (list, tuple)):
        return [canonical(item, parent=parent) for item in value]
    return value


def _pod_spec(pod_set: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_mapping(pod_set.get("template")).get("spec"))


def _count(pod_set: Mapping[str, Any]) -> object:
    count = pod_set.get("count")
    return 1 if count is None else count


def _pod_set_difference(
    job: Mapping[str, Any],
    recorded: Mapping[str, Any],
    placed: PodSetInfo | None,
) -> str | None:
    name = str(recorded.get("name", ""))
    job = without_duplicate_env(job)  # as the Workload was built (docs/concepts.md)
    counts = {_count(recorded)}
    if placed is not None:
        counts.add(placed.count)
    if _count(job) not in counts:
        return f"pod set {name}: count {_count(recorded)} -> {_count(job)}"
    cut = placed is not None and _count(job) == placed.count != _count(recorded)
    if job.get("minCount") != recorded.get("minCount") and not cut:
        # (a Job started with fewer pods than it asked for may no longer have a
        # minimum below its count: partial admission)
        return f"pod set {name}: minCount {recorded.get('minCount')} -> {job.get('minCount')}"
    job_spec, recorded_spec = _pod_spec(job), _pod_spec(recorded)
    for field in TEMPLATE_FIELDS:
        if field == "tolerations" and placed is not None:
            continue  # the admission adds the flavors' tolerations (Kueue ignores them too)
        if job_spec.get(field) == recorded_spec.get(field):
            continue  # the common case, without normalising
        now = canonical(job_spec.get(field), parent=field) or None
        before = canonical(recorded_spec.get(field), parent=field) or None
        if now == before:
            continue
        if field == "nodeSelector" and placed is not None:
            running = canonical({**_mapping(before), **placed.node_selector}, parent=field) or None
            if now == running:
                continue
        return f"pod set {name}: {field} changed"
    return None


def count_difference(
    job_pod_sets: Sequence[Mapping[str, Any]],
    workload_pod_sets: Sequence[Mapping[str, Any]],
    placed: Sequence[PodSetInfo],
) -> str | None:
    """:func:`pod_sets_difference` restricted to the pod sets and their counts: pure.

    For a running Job: kube-apiserver refuses every pod-template change
    while a Job is not suspended, so a template that differs from the
    admission's running form was not changed by its user; it differs when
    a flavor's ``nodeLabels`` changed since the Job started, which must not
    stop the Job.
    """
    counts_only = [
        {key: value for key, value in pod_set.items() if key != "template"}
        for pod_set in job_pod_sets
    ]
    recorded = [
        {key: value for key, value in pod_set.items() if key != "template"}
        for pod_set in workload_pod_sets
    ]
    return pod_sets_difference(counts_only, recorded, placed=placed)


def pod_sets_difference(
    job_pod_sets: Sequence[Mapping[str, Any]],
    workload_pod_sets: Sequence[Mapping[str, Any]],
    *,
    placed: Sequence[PodSetInfo] | None = None,
) -> str | None:
    """The first way the Job's pod sets differ from the Workload's, or None: pure.

    ``placed``: the admission's placement of each pod set, when the Workload
    holds quota (the Job may then be in its running form).
    """
    if len(job_pod_sets) != len(workload_pod_sets):
        return f"{len(workload_pod_sets)} pod sets -> {len(job_pod_sets)}"
    by_name = {info.name: info for info in placed or ()}
    for job_pod_set, recorded in zip(job_pod_sets, workload_pod_sets, strict=True):
        if job_pod_set.get("name") != recorded.get("name"):
            return f"pod set {recorded.get('name')} -> {job_pod_set.get('name')}"
        info = by_name.get(str(recorded.get("name"))) if placed is not None else None
        if placed is not None and info is None:
            info = PodSetInfo(name=str(recorded.get("name")), count=-1)
        difference = _pod_set_difference(job_pod_set, recorded, info)
        if difference is not None:
            return difference
    return None


__all__ = ["TEMPLATE_FIELDS", "canonical", "count_difference", "pod_sets_difference"]
