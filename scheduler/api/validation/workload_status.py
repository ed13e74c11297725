"""Workload status rules (docs/validation.md#workload); the update-only rules are
``workload_updates``.

"Reserved" means ``status.conditions`` holds ``QuotaReserved`` with status
``"True"``; most rules here only bite while the workload holds quota, because
that is when the scheduler's bookkeeping depends on the object not moving
under it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import rule_text as text
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import check_admission_check_name
from scheduler.api.validation.formats import (
    QUALIFIED_NAME_HINT,
    as_dict,
    check_enum,
    check_label_map,
    check_max,
    check_quantity,
    duplicate_key,
    is_label,
    is_qualified_name,
    is_subdomain,
    mappings,
    not_label,
    not_subdomain,
    parse_quantity,
    render_value,
    required,
    strings,
)
from scheduler.api.validation.resourceflavor import check_tolerations

STATUS = FieldPath(("status",))
ADMISSION = STATUS.child("admission")
ASSIGNMENTS = ADMISSION.child("podSetAssignments")
CONDITION_STATUSES = ("True", "False", "Unknown")
CHECK_STATES = ("Pending", "Ready", "Retry", "Rejected")
DELAYED_TOPOLOGY = ("Pending", "Ready")
REASON_PATTERN: Final = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_RE = re.compile(REASON_PATTERN)
MAX_CONDITIONS: Final = 16
MAX_REASON_CHARACTERS: Final = 1024
MAX_MESSAGE_CHARACTERS: Final = 32768
REQUIRED_CONDITION_FIELDS: Final = ("type", "status", "reason", "lastTransitionTime")
# The status fields the status and update-only rules read, besides the conditions (WL-35, which
# judge each condition alone) and whether QuotaReserved is True.  The status subresource
# keeps spec and metadata as they were, so a status write that keeps these fields and
# that truth, with every condition valid, cannot break a rule the old object passed: the
# webhook's registration lets such writes skip the round trip (webhook/workload_writes.py).
JUDGED_STATUS_FIELDS: Final = (
    "admission",
    "reclaimablePods",
    "admissionChecks",
    "clusterName",
    "nominatedClusterNames",
)
_TOLERATION_RULES = {f"RF-{n}": "WL-39" for n in range(10, 17)}


def has_condition(obj: Mapping[str, Any] | None, kind: str) -> bool:
    """Is condition ``kind`` present with status "True"?  Pure."""
    if obj is None:
        return False
    conditions = as_dict(obj.get("status")).get("conditions")
    return any(
        item.get("type") == kind and item.get("status") == "True"
        for _, item in mappings(conditions)
    )


class _AnyPodSet(dict[str, "int | None"]):
    """Stand-in when ``spec.podSets`` has the wrong type: every name counts as known."""

    def __contains__(self, key: object) -> bool:
        return True

    def get(self, key: str, default: int | None = None) -> int | None:  # type: ignore[override]
        return default


def pod_set_counts(obj: Mapping[str, Any]) -> dict[str, int | None]:
    """Spec pod set name → count (None when not an integer): pure.

    When ``spec.podSets`` is not a list (already reported), the rules that
    compare names with it are skipped: every name is then "known".
    """
    if not isinstance(as_dict(obj.get("spec")).get("podSets"), (list, type(None))):
        return _AnyPodSet()
    counts: dict[str, int | None] = {}
    for _, pod_set in mappings(as_dict(obj.get("spec")).get("podSets")):
        if isinstance(pod_set.get("name"), str):
            count = pod_set.get("count")
            counts.setdefault(pod_set["name"], count if isinstance(count, int) else None)
    return counts


def _whole_units(resource: str, raw: object) -> int | None:
    quantity = parse_quantity(raw)
    if quantity is None:
        return None
    milli = quantity.milli_value()
    return milli if resource == "cpu" else -(-milli // 1000)


def _check_admission(
    obj: dict[str, Any], old: dict[str, Any] | None, reserved: bool, errors: list[FieldError]
) -> None:
    """WL-30 … WL-34."""
    status = as_dict(obj.get("status"))
    admission = status.get("admission")
    counts = pod_set_counts(obj)
    if (
        reserved
        and admission is None
        and not (
            has_condition(old, "QuotaReserved")
            and old is not None
            and as_dict(old.get("status")).get("admission") is None
        )
    ):
        errors.append(
            error(
                ADMISSION,
                "required while the QuotaReserved condition is True: record the ClusterQueue and "
                "the pod set assignments",
                rule="WL-30",
            )
        )
    if not isinstance(admission, dict):
        return
    assignments = admission.get("podSetAssignments")
    spec_pod_sets = as_dict(obj.get("spec")).get("podSets")
    if (
        reserved
        and isinstance(assignments, list)
        and isinstance(spec_pod_sets, list)
        and len(assignments) != len(spec_pod_sets)
    ):
        errors.append(
            error(
                ASSIGNMENTS,
                f"has {len(assignments)} assignments but spec.podSets has {len(spec_pod_sets)}; "
                "give exactly one assignment per pod set",
                origin="C",
                rule="WL-31",
            )
        )
    for k, assignment in mappings(assignments):
        at = ASSIGNMENTS.index(k)
        name = assignment.get("name")
        if reserved and isinstance(name, str) and name not in counts:
            errors.append(
                error(at.child("name"), f'no pod set named "{name}" in spec.podSets', rule="WL-32")
            )
        count = (
            assignment.get("count")
            if "count" in assignment
            else counts.get(name)
            if isinstance(name, str)
            else None
        )
        for resource, raw in as_dict(assignment.get("resourceUsage")).items():
            here = at.child("resourceUsage").key(resource)
            if check_quantity(raw, here, errors, rule="WL-34") is None:
                continue
            units = _whole_units(resource, raw)
            if (
                reserved
                and isinstance(count, int)
                and count > 0
                and units is not None
                and units % count
            ):
                errors.append(
                    error(
                        here,
                        f"{render_value(raw)} is not a multiple of count {count}; resourceUsage "
                        "is the per-pod usage times count",
                        rule="WL-33",
                    )
                )
    cluster_queue = admission.get("clusterQueue")
    if cluster_queue is None or cluster_queue == "":
        errors.append(
            error(
                ADMISSION.child("clusterQueue"),
                required("name the ClusterQueue that reserved the quota"),
                origin="S",
                rule="WL-34",
            )
        )
    elif isinstance(cluster_queue, str) and not is_subdomain(cluster_queue):
        errors.append(
            error(
                ADMISSION.child("clusterQueue"),
                not_subdomain(cluster_queue, "ClusterQueue name"),
                origin="S",
                rule="WL-34",
            )
        )
    check_max(assignments, 18, ASSIGNMENTS, errors, rule="WL-34")
    for k, assignment in mappings(assignments):
        at = ASSIGNMENTS.index(k)
        name, count = assignment.get("name"), assignment.get("count")
        if isinstance(name, str) and not is_label(name):
            errors.append(
                error(at.child("name"), not_label(name, "pod set name"), origin="S", rule="WL-34")
            )
        if isinstance(count, int) and count < 0:
            errors.append(
                error(
                    at.child("count"),
                    "must be greater than or equal to 0",
                    origin="S",
                    rule="WL-34",
                )
            )
        for resource, flavor in as_dict(assignment.get("flavors")).items():
            if isinstance(flavor, str) and not is_subdomain(flavor):
                errors.append(
                    error(
                        at.child("flavors").key(resource),
                        not_subdomain(flavor, "flavor name"),
                        origin="S",
                        rule="WL-34",
                    )
                )
        check_enum(
            assignment.get("delayedTopologyRequest"),
            DELAYED_TOPOLOGY,
            at.child("delayedTopologyRequest"),
            errors,
            rule="WL-34",
        )


def _check_conditions(conditions: object, errors: list[FieldError]) -> None:
    """WL-35."""
    at = STATUS.child("conditions")
    check_max(conditions, MAX_CONDITIONS, at, errors, rule="WL-35")
    seen: set[str] = set()
    for i, condition in mappings(conditions):
        here = at.index(i)
        for field in REQUIRED_CONDITION_FIELDS:
            if condition.get(field) in (None, ""):
                errors.append(error(here.child(field), required(), origin="S", rule="WL-35"))
        check_enum(
            condition.get("status") or None,
            CONDITION_STATUSES,
            here.child("status"),
            errors,
            rule="WL-35",
        )
        reason = condition.get("reason")
        if isinstance(reason, str) and reason != "":
            if len(reason) > MAX_REASON_CHARACTERS:
                errors.append(
                    error(
                        here.child("reason"),
                        f"must be at most {MAX_REASON_CHARACTERS} characters",
                        origin="S",
                        rule="WL-35",
                    )
                )
            elif _REASON_RE.fullmatch(reason) is None:
                errors.append(
                    error(
                        here.child("reason"),
                        'reason must start with a letter and use letters, digits, "_", "," or ":"',
                        origin="S",
                        rule="WL-35",
                    )
                )
        message = condition.get("message")
        if isinstance(message, str) and len(message) > MAX_MESSAGE_CHARACTERS:
            errors.append(
                error(
                    here.child("message"),
                    f"must be at most {MAX_MESSAGE_CHARACTERS} characters",
                    origin="S",
                    rule="WL-35",
                )
            )
        generation = condition.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            errors.append(
                error(
                    here.child("observedGeneration"),
                    "must be greater than or equal to 0",
                    origin="S",
                    rule="WL-35",
                )
            )
        kind = condition.get("type")
        if isinstance(kind, str) and kind != "":
            if kind in seen:
                errors.append(
                    error(
                        here.child("type"),
                        duplicate_key("condition type", kind),
                        origin="S",
                        rule="WL-35",
                    )
                )
            seen.add(kind)


def _checkreclaimable_counts(
    obj: dict[str, Any], old: dict[str, Any] | None, errors: list[FieldError]
) -> None:
    """WL-36, WL-37."""
    counts = pod_set_counts(obj)
    old_counts = reclaimable_counts(old) if old is not None else {}
    for _, item in mappings(as_dict(obj.get("status")).get("reclaimablePods")):
        name, count = item.get("name"), item.get("count")
        if not isinstance(name, str):
            continue
        at = STATUS.child("reclaimablePods").key(name)
        if name not in counts:
            errors.append(error(at.child("name"), f'no pod set named "{name}"', rule="WL-36"))
            continue
        limit = counts[name]
        if (
            isinstance(count, int)
            and isinstance(limit, int)
            and count > limit
            and old_counts.get(name) != count
        ):
            errors.append(
                error(at.child("count"), f"must be less than or equal to {limit}", rule="WL-37")
            )


def _check_admission_checks(obj: dict[str, Any], errors: list[FieldError]) -> None:
    """WL-38, WL-39."""
    at = STATUS.child("admissionChecks")
    checks = as_dict(obj.get("status")).get("admissionChecks")
    check_max(checks, 8, at, errors, rule="WL-38")
    counts = pod_set_counts(obj)
    seen: set[str] = set()
    for k, check in mappings(checks):
        here = at.index(k)
        check_admission_check_name(check.get("name"), here, seen, errors, rule="WL-38")
        if check.get("state") is None:
            errors.append(
                error(
                    here.child("state"),
                    required("use Pending, Ready, Retry or Rejected"),
                    origin="S",
                    rule="WL-38",
                )
            )
        check_enum(check.get("state"), CHECK_STATES, here.child("state"), errors, rule="WL-38")
        for field in ("requeueAfterSeconds", "retryCount"):
            value = check.get(field)
            if isinstance(value, int) and value < 0:
                errors.append(
                    error(
                        here.child(field),
                        "must be greater than or equal to 0",
                        origin="S",
                        rule="WL-38",
                    )
                )
        updates = check.get("podSetUpdates")
        check_max(updates, 18, here.child("podSetUpdates"), errors, rule="WL-39")
        for u, update in mappings(updates):
            update_at = here.child("podSetUpdates").index(u)
            update_name = update.get("name")
            if isinstance(update_name, str) and update_name not in counts:
                errors.append(
                    error(
                        update_at.child("name"),
                        f'no pod set named "{update_name}" in spec.podSets',
                        rule="WL-39",
                    )
                )
            for field in ("labels", "nodeSelector"):
                check_label_map(
                    update.get(field),
                    update_at.child(field),
                    errors,
                    rule="WL-39",
                    keyed_paths=False,
                )
            for key in as_dict(update.get("annotations")):
                if not is_qualified_name(key):
                    errors.append(
                        error(
                            update_at.child("annotations"),
                            f'invalid annotation key "{key}": {QUALIFIED_NAME_HINT}',
                            rule="WL-39",
                        )
                    )
            check_tolerations(
                update.get("tolerations"),
                update_at.child("tolerations"),
                errors,
                rule_of=_TOLERATION_RULES,
            )


def _check_clusters(status: dict[str, Any], errors: list[FieldError]) -> None:
    """WL-40, WL-41."""
    cluster, nominated = status.get("clusterName"), status.get("nominatedClusterNames")
    if isinstance(cluster, str) and cluster != "" and isinstance(nominated, list) and nominated:
        errors.append(
            error(
                STATUS.child("clusterName"),
                text.CLUSTER_NAME_EXCLUSIVE,
                origin="C",
                rule="WL-40",
            )
        )
    check_max(nominated, 20, STATUS.child("nominatedClusterNames"), errors, rule="WL-41")
    for position, name in strings(nominated):
        if len(name) > 256:
            errors.append(
                error(
                    STATUS.child("nominatedClusterNames").index(position),
                    "must be at most 256 characters",
                    origin="S",
                    rule="WL-41",
                )
            )
    if isinstance(cluster, str) and len(cluster) > 256:
        errors.append(
            error(
                STATUS.child("clusterName"),
                "must be at most 256 characters",
                origin="S",
                rule="WL-41",
            )
        )


def check_status(obj: dict[str, Any], old: dict[str, Any] | None, errors: list[FieldError]) -> None:
    """Every status rule (WL-30 … WL-41)."""
    status = as_dict(obj.get("status"))
    _check_admission(obj, old, has_condition(obj, "QuotaReserved"), errors)
    _check_conditions(status.get("conditions"), errors)
    _checkreclaimable_counts(obj, old, errors)
    _check_admission_checks(obj, errors)
    _check_clusters(status, errors)


def reclaimable_counts(obj: Mapping[str, Any]) -> dict[str, int]:
    """``status.reclaimablePods`` as pod-set name to count, the malformed entries left out."""
    return {
        item["name"]: item["count"]
        for _, item in mappings(as_dict(obj.get("status")).get("reclaimablePods"))
        if isinstance(item.get("name"), str) and isinstance(item.get("count"), int)
    }
