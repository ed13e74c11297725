"""WorkloadPriorityClass rules (docs/validation.md#other-kinds).

The kind has no spec: ``value`` and ``description`` are top-level fields.
``value`` is declared ``ANY`` in the shape table so that a non-integer is
reported by WPC-2 with its own message rather than as a generic type error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import in_rule_order, numbered, prepare
from scheduler.api.validation.formats import check_metadata, required
from scheduler.api.validation.known_fields import WORKLOAD_PRIORITY_CLASS

RULE_ORDER = numbered("WPC", 3) + ["UNKNOWN-FIELD"]
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def validate_workload_priority_class(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Every WorkloadPriorityClass rule (``value`` stays mutable): pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, WORKLOAD_PRIORITY_CLASS, errors)
    if obj is None:
        return errors
    check_metadata(obj, errors, namespaced=False)
    value = obj.get("value")
    at = FieldPath(("value",))
    if value is None:
        errors.append(
            error(at, required("give the priority as an integer"), origin="S", rule="WPC-1")
        )
    elif (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and not value.is_integer())
        or not INT32_MIN <= value <= INT32_MAX
    ):
        errors.append(error(at, "must be a 32-bit integer", origin="S", rule="WPC-2"))
    description = obj.get("description")
    if isinstance(description, str) and len(description) > 2048:
        errors.append(
            error(
                FieldPath(("description",)),
                "must be at most 2048 characters",
                origin="S",
                rule="WPC-3",
            )
        )
    return in_rule_order(errors, RULE_ORDER)
