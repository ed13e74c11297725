"""What a Workload takes over from its job while it exists (pure).

The ``kueue.x-k8s.io/admission-gated-by`` annotation and the
WorkloadPriorityClass (:func:`propagation`, Kueue's ``UpdateAdmissionGatedBy``
and ``UpdateWorkloadPriority``), the owner reference of a prebuilt Workload,
a Workload whose owner is gone (:func:`orphaned`), and the reclaimable pods
of kinds that declare them (:func:`reclaimable_update`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import (
    ADMISSION_GATED_BY_ANNOTATION,
    JOB_UID_LABEL,
    PRIORITY_CLASS_LABEL,
)
from scheduler.jobs.actions import (
    PropagateToWorkload,
    SetReclaimablePods,
)
from scheduler.jobs.protocol import (
    ReclaimableCount,
)
from scheduler.jobs.registry import for_object
from scheduler.jobs.workload_from_job import (
    PriorityClasses,
    admission_gates,
    owner_reference,
    workload_priority,
)


def _priority_update(
    job: Mapping[str, Any],
    workload: Mapping[str, Any],
    priority_classes: PriorityClasses | None,
) -> tuple[dict[str, str] | None, int] | None:
    """(priorityClassRef, priority) the Workload should have now, None to leave it: pure.

    Kueue's ``UpdateWorkloadPriority``: only a change of the job's
    ``kueue.x-k8s.io/priority-class`` label moves the Workload; one whose
    priority comes from a pod PriorityClass does not follow the label, one
    holding quota without a class can no longer be given one (and keeps a
    WorkloadPriorityClass reference while it holds quota).  A class not known
    yet leaves the Workload as it is; it is decided again when the class comes.
    """
    spec = objects.spec(workload)
    ref = spec.get("priorityClassRef")
    ref = ref if isinstance(ref, Mapping) else None
    holds_quota = objects.has_quota_reservation(workload)
    if ref is None and holds_quota:
        return None
    if ref is not None and ref.get("kind") != "WorkloadPriorityClass":
        return None
    wanted = objects.label(job, PRIORITY_CLASS_LABEL) or ""
    if (str(ref.get("name") or "") if ref is not None else "") == wanted:
        return None
    recorded = [p for p in spec.get("podSets") or [] if isinstance(p, Mapping)]
    new_ref, value = workload_priority(job, [dict(p) for p in recorded], priority_classes)
    if wanted and value is None:
        return None
    if holds_quota and (new_ref is None or new_ref.get("kind") != "WorkloadPriorityClass"):
        return None
    return new_ref, value if value is not None else 0


OWNER_NOT_FOUND: Final = "OwnerNotFound"
OWNER_NOT_FOUND_MESSAGE: Final = "The workload's owner no longer exists"


def orphaned(workload: Mapping[str, Any]) -> bool:
    """Whether a Workload made for a job lost it (no owner reference left, as after the job's
    deletion with orphan propagation) and is not finished: Kueue then finishes it
    (``OwnerNotFound``) so its quota is released: pure."""
    return (
        not objects.metadata(workload).get("ownerReferences")
        and bool(objects.label(workload, JOB_UID_LABEL))
        and not objects.is_finished(workload)
        and not objects.is_being_deleted(workload)
    )


def _adopted(job: Mapping[str, Any], workload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The metadata of a prebuilt Workload its job takes over (Kueue: the job becomes its
    controller owner, the Workload is labelled with the job's UID), or None: pure."""
    integration = for_object(job)
    uid = objects.uid(job)
    if integration is None or not uid or not objects.prebuilt_workload_name(job):
        return None
    references = list(objects.metadata(workload).get("ownerReferences") or [])
    if any(isinstance(ref, Mapping) and ref.get("controller") for ref in references):
        return None  # controlled already (by this job, or by another: left as it is)
    metadata = copy.deepcopy(dict(objects.metadata(workload)))
    metadata["ownerReferences"] = [*references, owner_reference(job, integration)]
    metadata["labels"] = {**objects.labels(workload), JOB_UID_LABEL: uid}
    return metadata


def propagation(
    job: Mapping[str, Any],
    workload: Mapping[str, Any],
    priority_classes: PriorityClasses | None = None,
) -> PropagateToWorkload | None:
    """What of the job its Workload must follow and does not yet, or None: pure.

    The ``kueue.x-k8s.io/admission-gated-by`` annotation, copied as it is
    (absent when the job has none: the gates only ever come off), and the
    WorkloadPriorityClass (:func:`_priority_update`).
    """
    updated = copy.deepcopy(dict(workload))
    messages = []
    adopted = _adopted(job, workload)
    if adopted is not None:
        updated["metadata"] = adopted
        messages.append(f"Adopted prebuilt workload: {objects.key(workload)}")
    gates = admission_gates(job)
    if gates != (objects.annotation(workload, ADMISSION_GATED_BY_ANNOTATION) or ""):
        metadata = updated.setdefault("metadata", {})
        annotations = dict(objects.annotations(workload))
        if gates:
            annotations[ADMISSION_GATED_BY_ANNOTATION] = gates
        else:
            annotations.pop(ADMISSION_GATED_BY_ANNOTATION, None)
        if annotations:
            metadata["annotations"] = annotations
        else:
            metadata.pop("annotations", None)
        messages.append(f'Updated workload AdmissionGatedBy to "{gates}"')
    priority = _priority_update(job, workload, priority_classes)
    if priority is not None:
        ref, value = priority
        spec = updated["spec"] = dict(objects.spec(workload))
        if ref is None:
            spec.pop("priorityClassRef", None)
        else:
            spec["priorityClassRef"] = ref
        spec["priority"] = value
        messages.append(f"Updated workload priority class: {objects.key(workload)}")
    return PropagateToWorkload(updated, tuple(messages)) if messages else None


def reclaimable_update(
    workload: Mapping[str, Any], reclaimable: Sequence[ReclaimableCount]
) -> SetReclaimablePods | None:
    """The ``status.reclaimablePods`` to write, None when the Workload already says it: pure.

    Each count is capped at its pod set's count (Kueue's
    ``LimitReclaimablePodsToPodSetSizes``: a job's succeeded pods may outnumber
    a pod set that shrank); pod sets the Workload does not have are left out.
    """
    sizes = {
        str(p.get("name")): p.get("count")
        for p in objects.spec(workload).get("podSets") or []
        if isinstance(p, Mapping)
    }
    wanted: dict[str, int] = {}
    for item in reclaimable:
        size = sizes.get(item.name)
        if item.name not in sizes:
            continue
        wanted[item.name] = min(item.count, size) if isinstance(size, int) else item.count
    recorded = objects.status(workload).get("reclaimablePods")
    current = {
        str(entry.get("name")): entry.get("count")
        for entry in (recorded if isinstance(recorded, list) else [])
        if isinstance(entry, Mapping)
    }
    if current == wanted:
        return None
    return SetReclaimablePods(tuple(sorted(wanted.items())))
