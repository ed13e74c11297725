"""Plumbing shared by every kind's validator.

* ``prepare`` runs the parse and defaults steps of
  docs/validation.md#order-of-processing on one raw object: schema defaults
  (idempotent, so callers may or may not have defaulted already), then the
  shape pass.  It returns the cleaned object and the
  shape violations.
* ``in_rule_order`` sorts violations by the position of their rule in the
  rule tables (type errors first, unknown fields last;
  docs/validation.md#error-format), and
  the sort is stable so that within one rule array index order is kept.
* Feature gates that change rules (docs/configuration.md#feature-gates) are
  read with :func:`gate`: the Configuration's value, else kuota's default
  (``scheduler/api/feature_gates.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler.api.defaults import apply_schema_defaults
from scheduler.api.feature_gates import kuota_default
from scheduler.api.field import FieldError, FieldPath, Origin, error
from scheduler.api.quantity import Quantity
from scheduler.api.validation.formats import (
    check_quantity,
    duplicate_key,
    negative,
    render_value,
    required,
)
from scheduler.api.validation.shape import Obj, clean

FeatureGates = Mapping[str, bool]


def gate(gates: FeatureGates | None, name: str) -> bool:
    """Is a feature gate on (explicit value, else kuota's default)?  Pure."""
    if gates is not None and isinstance(gates.get(name), bool):
        return bool(gates[name])
    return kuota_default(name)


def prepare(obj: object, shape: Obj, errors: list[FieldError]) -> dict[str, Any] | None:
    """Default then shape-check one raw object; None when it is not an object at all."""
    if not isinstance(obj, Mapping):
        errors.append(
            error("", "the object must be a mapping (YAML/JSON object)", origin="S", rule="TYPE")
        )
        return None
    cleaned = clean(apply_schema_defaults(obj), shape, FieldPath(), errors)
    return cleaned if isinstance(cleaned, dict) else None


def prepare_old(old: object, shape: Obj) -> dict[str, Any] | None:
    """The old object of an UPDATE, cleaned; its own violations are not reported."""
    if old is None:
        return None
    return prepare(old, shape, [])


def in_rule_order(errors: list[FieldError], order: Sequence[str]) -> list[FieldError]:
    """Sort violations by rule position: pure, stable."""
    rank = {rule: position for position, rule in enumerate(order)}
    tail = len(order)

    def key(item: FieldError) -> int:
        if item.rule == "TYPE":
            return -2
        if item.rule.startswith("META"):
            return -1
        return rank.get(item.rule, tail)

    return sorted(errors, key=key)


def numbered(prefix: str, last: int) -> list[str]:
    """``["CQ-1", …, "CQ-<last>"]``: pure."""
    return [f"{prefix}-{number}" for number in range(1, last + 1)]


ONE_NANO = Quantity.parse("1n")


def check_weight(
    fair_sharing: object,
    path: FieldPath,
    errors: list[FieldError],
    *,
    rules: tuple[str, str, str],
    origins: tuple[Origin, Origin, Origin] = ("S", "W", "W"),
) -> None:
    """``fairSharing.weight``: quantity, ≥ 0, and 0 or > 1n (CQ-35/36/37, LQ-4/5, CO-8)."""
    if not isinstance(fair_sharing, dict):
        return
    raw = fair_sharing.get("weight")
    at = path.child("weight")
    weight = check_quantity(raw, at, errors, rule=rules[0], origin=origins[0])
    if weight is None:
        return
    if weight.is_negative():
        errors.append(error(at, negative(raw), origin=origins[1], rule=rules[1]))
    elif not weight.is_zero() and weight <= ONE_NANO:
        errors.append(
            error(
                at,
                f"weight {render_value(raw)} is too small to be used: set 0, or a value greater "
                "than 1n (0.000000001)",
                origin=origins[2],
                rule=rules[2],
            )
        )


def check_admission_check_name(
    name: object, here: FieldPath, seen: set[str], errors: list[FieldError], *, rule: str
) -> None:
    """An admission-check reference's name: required, at most 316 characters, unique
    (pure apart from ``errors``).
    """
    if name is None or name == "":
        errors.append(
            error(here.child("name"), required("name the AdmissionCheck"), origin="S", rule=rule)
        )
    elif isinstance(name, str):
        if len(name) > 316:
            errors.append(
                error(here.child("name"), "must be at most 316 characters", origin="S", rule=rule)
            )
        if name in seen:
            errors.append(
                error(
                    here.child("name"),
                    duplicate_key("admission check", name),
                    origin="S",
                    rule=rule,
                )
            )
        seen.add(name)
