"""Workload update-only rules (WL-50 … WL-62; docs/validation.md#workload).

A reserved workload's spec, and most of its admission, may not move under the
scheduler's bookkeeping; these rules compare the new object with the old one.
"""

from __future__ import annotations

from typing import Any

from scheduler.api import rule_text as text
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.formats import as_dict, mappings, render_value, strings
from scheduler.api.validation.workload_status import (
    ADMISSION,
    STATUS,
    has_condition,
    pod_set_counts,
    reclaimable_counts,
)


def check_spec_update(
    obj: dict[str, Any], old: dict[str, Any], *, elastic_slices: bool, errors: list[FieldError]
) -> None:
    """WL-50 … WL-56."""
    spec, old_spec = as_dict(obj.get("spec")), as_dict(old.get("spec"))
    spec_at = FieldPath(("spec",))
    reserved_before, reserved_now = (
        has_condition(old, "QuotaReserved"),
        has_condition(obj, "QuotaReserved"),
    )
    if reserved_before:
        pod_sets, old_pod_sets = spec.get("podSets"), old_spec.get("podSets")
        if isinstance(pod_sets, list) and isinstance(old_pod_sets, list):
            if len(pod_sets) != len(old_pod_sets):
                errors.append(
                    error(
                        spec_at.child("podSets"),
                        "pod sets cannot change while the workload holds a quota reservation",
                        rule="WL-50",
                    )
                )
            else:
                for i, (before, after) in enumerate(zip(old_pod_sets, pod_sets, strict=True)):
                    if _pod_set_changed(before, after, elastic_slices):
                        name = render_value(after.get("name")) if isinstance(after, dict) else ""
                        errors.append(
                            error(
                                spec_at.child("podSets").index(i),
                                f'pod set "{name}" cannot change while the workload holds a quota '
                                "reservation",
                                rule="WL-51",
                            )
                        )
    if reserved_before and reserved_now and spec.get("queueName") != old_spec.get("queueName"):
        errors.append(
            error(
                spec_at.child("queueName"),
                text.QUEUE_NAME_WHILE_RESERVED.format(old=render_value(old_spec.get("queueName"))),
                origin="C",
                rule="WL-52",
            )
        )
    ref, old_ref = spec.get("priorityClassRef"), old_spec.get("priorityClassRef")
    if reserved_before and (ref is None) != (old_ref is None):
        errors.append(
            error(
                spec_at.child("priorityClassRef"),
                text.REF_ADDED_WHILE_RESERVED,
                origin="C",
                rule="WL-53",
            )
        )
    if reserved_before and isinstance(ref, dict) and isinstance(old_ref, dict):
        for field in ("group", "kind"):
            if ref.get(field) != old_ref.get(field):
                errors.append(
                    error(
                        spec_at.child("priorityClassRef", field),
                        text.REF_FIELD_WHILE_RESERVED,
                        origin="C",
                        rule="WL-54",
                    )
                )
        both_pc = all(
            item.get("group") == "scheduling.k8s.io" and item.get("kind") == "PriorityClass"
            for item in (ref, old_ref)
        )
        if both_pc and ref.get("name") != old_ref.get("name"):
            errors.append(
                error(
                    spec_at.child("priorityClassRef", "name"),
                    text.PRIORITY_CLASS_WHILE_RESERVED,
                    origin="C",
                    rule="WL-55",
                )
            )
    if has_condition(old, "Admitted") and has_condition(obj, "Admitted"):
        if (spec.get("maximumExecutionTimeSeconds") or 0) != (
            old_spec.get("maximumExecutionTimeSeconds") or 0
        ):
            errors.append(
                error(
                    spec_at.child("maximumExecutionTimeSeconds"),
                    text.EXECUTION_TIME_WHILE_ADMITTED,
                    origin="C",
                    rule="WL-56",
                )
            )


def _pod_set_changed(before: object, after: object, elastic_slices: bool) -> bool:
    if before == after:
        return False
    if elastic_slices and isinstance(before, dict) and isinstance(after, dict):
        old_count, new_count = before.get("count"), after.get("count")
        if isinstance(old_count, int) and isinstance(new_count, int) and new_count <= old_count:
            return {**before, "count": 0} != {**after, "count": 0}
    return True


_TOPOLOGY_FIELDS = ("topologyAssignment", "delayedTopologyRequest")


def _without_topology(admission: object) -> object:
    """The admission with the TAS fields of each assignment removed (WL-57): pure."""
    if not isinstance(admission, dict) or not isinstance(admission.get("podSetAssignments"), list):
        return admission
    assignments = [
        {key: value for key, value in item.items() if key not in _TOPOLOGY_FIELDS}
        if isinstance(item, dict)
        else item
        for item in admission["podSetAssignments"]
    ]
    return {**admission, "podSetAssignments": assignments}


def check_status_update(obj: dict[str, Any], old: dict[str, Any], errors: list[FieldError]) -> None:
    """WL-57 … WL-61."""
    status, old_status = as_dict(obj.get("status")), as_dict(old.get("status"))
    admission, old_admission = status.get("admission"), old_status.get("admission")
    if admission is not None and old_admission is not None and admission != old_admission:
        if _without_topology(admission) != _without_topology(old_admission):
            errors.append(
                error(
                    ADMISSION,
                    "cannot be modified once set; clear it (evict) and set it again instead",
                    rule="WL-57",
                )
            )
    if has_condition(old, "QuotaReserved") and has_condition(obj, "QuotaReserved"):
        now = reclaimable_counts(obj)
        new_counts = pod_set_counts(obj)
        admitted_counts = {
            item.get("name"): item.get("count")
            for _, item in mappings(as_dict(old_admission).get("podSetAssignments"))
        }
        for name, before in reclaimable_counts(old).items():
            spec_count, admitted = new_counts.get(name), admitted_counts.get(name)
            if isinstance(spec_count, int) and isinstance(admitted, int) and spec_count < admitted:
                continue
            at = STATUS.child("reclaimablePods").key(name)
            if name not in now:
                errors.append(
                    error(
                        at,
                        "cannot be removed while the workload holds a quota reservation",
                        rule="WL-58",
                    )
                )
            elif now[name] < before:
                errors.append(
                    error(at.child("count"), f"cannot decrease below {before}", rule="WL-58")
                )
    old_checks = {item.get("name"): item for _, item in mappings(old_status.get("admissionChecks"))}
    for k, check in mappings(status.get("admissionChecks")):
        previous = old_checks.get(check.get("name"))
        if (
            previous is not None
            and previous.get("state") == "Ready"
            and check.get("state") == "Ready"
        ):
            if previous.get("podSetUpdates") != check.get("podSetUpdates"):
                errors.append(
                    error(
                        STATUS.child("admissionChecks").index(k).child("podSetUpdates"),
                        "cannot change after the check became Ready",
                        rule="WL-59",
                    )
                )
    cluster, old_cluster = status.get("clusterName"), old_status.get("clusterName")
    if (
        isinstance(old_cluster, str)
        and old_cluster != ""
        and isinstance(cluster, str)
        and cluster not in ("", old_cluster)
    ):
        errors.append(
            error(
                STATUS.child("clusterName"),
                text.CLUSTER_NAME_SET.format(old=render_value(old_cluster)),
                origin="C",
                rule="WL-60",
            )
        )
    if (old_cluster is None or old_cluster == "") and isinstance(cluster, str) and cluster != "":
        nominated = [name for _, name in strings(old_status.get("nominatedClusterNames"))]
        if cluster not in nominated:
            errors.append(
                error(
                    STATUS.child("clusterName"),
                    f"must be one of the nominated clusters ({', '.join(nominated) or 'none'})",
                    rule="WL-61",
                )
            )
