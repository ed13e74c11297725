"""Cohort rules (docs/validation.md#cohort).

Resource groups follow the ClusterQueue rules (CO-3 reuses the CQ checks and
reports their CQ rule ids); the limits need a parent cohort instead of a
cohort (CO-4, CO-5); a Cohort may lend more than its nominal quota (CO-6) and
has no per-object totals (CO-7).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import check_weight, in_rule_order, numbered, prepare
from scheduler.api.validation.formats import as_dict, check_metadata, is_subdomain, not_subdomain
from scheduler.api.validation.known_fields import COHORT
from scheduler.api.validation.resource_groups import check_resource_groups, quota_entries

SPEC = FieldPath(("spec",))
RULE_ORDER = (
    ["CO-1", "CO-2", "CO-3"]
    + numbered("CQ", 17)
    + ["CQ-19", "CQ-20", "CO-4", "CO-5", "CO-8", "CQ-35", "CQ-36", "CQ-37", "UNKNOWN-FIELD"]
)


def validate_cohort(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Every Cohort rule (CREATE and UPDATE are the same): pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, COHORT, errors)
    if obj is None:
        return errors
    check_metadata(obj, errors, namespaced=False, name_rule="CO-1")
    spec = as_dict(obj.get("spec"))
    parent = spec.get("parentName")
    if isinstance(parent, str) and parent != "" and not is_subdomain(parent):
        errors.append(
            error(
                SPEC.child("parentName"),
                not_subdomain(parent, "cohort name"),
                origin="S",
                rule="CO-2",
            )
        )
    groups = spec.get("resourceGroups")
    check_resource_groups(groups, errors)
    if parent is None or parent == "":
        for at, quota in quota_entries(groups):
            if "borrowingLimit" in quota:
                errors.append(
                    error(
                        at.child("borrowingLimit"),
                        "a borrowing limit needs a parent cohort: set spec.parentName or remove "
                        "borrowingLimit",
                        rule="CO-4",
                    )
                )
            if "lendingLimit" in quota:
                errors.append(
                    error(
                        at.child("lendingLimit"),
                        "a lending limit needs a parent cohort: set spec.parentName or remove "
                        "lendingLimit",
                        rule="CO-5",
                    )
                )
    check_weight(
        spec.get("fairSharing"),
        SPEC.child("fairSharing"),
        errors,
        rules=("CQ-35", "CQ-36", "CQ-37"),
    )
    return in_rule_order(errors, RULE_ORDER)
