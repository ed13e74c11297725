"""Rules of kuota's validating webhook for AppWrappers (docs/validation.md#jobs).

The rules every kind shares, "suspended" being ``spec.suspend``, and AW-1: a
declared pod set's ``tas-sub-group-count`` annotation is a positive integer.
Kueue reads that annotation into the pod set's topology request and, when it
is not a number, logs and drops it; kuota refuses it at the door instead, so
the request a user wrote is never half applied.  Pure, never raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import in_rule_order
from scheduler.jobs.appwrapper import components
from scheduler.jobs.job_rules import RULE_ORDER as SHARED_ORDER
from scheduler.jobs.job_rules import validate_job_kind

RULE_ORDER: Final = [*[rule for rule in SHARED_ORDER if rule != "UNKNOWN-FIELD"], "AW-1"]


def _check_pod_set_annotations(aw: Mapping[str, Any], errors: list[FieldError]) -> None:
    """AW-1 on every declared pod set of every component."""
    at = FieldPath(("spec", "components"))
    for index, component in enumerate(components.components(aw)):
        for position, pod_set in enumerate(components.declared_pod_sets(component)):
            annotations = pod_set.get("annotations")
            if not isinstance(annotations, Mapping):
                continue
            value = annotations.get(components.TAS_SUB_GROUP_COUNT)
            if value is None:
                continue
            count = components.integer(value)
            if count is not None and count > 0:
                continue
            errors.append(
                error(
                    at.index(index)
                    .child("podSets")
                    .index(position)
                    .child("annotations")
                    .key(components.TAS_SUB_GROUP_COUNT),
                    f"{value!r}: the number of sub-groups must be a positive integer",
                    rule="AW-1",
                )
            )


def validate_appwrapper(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    *,
    suspended_when: Callable[[Mapping[str, Any]], bool],
    namespace_has_default_queue: bool = False,
) -> list[FieldError]:
    """Every rule for an AppWrapper (CREATE, or UPDATE when ``old`` is given)."""
    errors = validate_job_kind(
        new,
        old,
        namespace_has_default_queue=namespace_has_default_queue,
        suspended_when=suspended_when,
    )
    if isinstance(new, Mapping):
        _check_pod_set_annotations(new, errors)
    return in_rule_order(errors, RULE_ORDER)


__all__ = ["RULE_ORDER", "validate_appwrapper"]
