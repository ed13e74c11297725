"""AdmissionCheck rules (docs/validation.md#other-kinds)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scheduler.api import rule_text as text
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import in_rule_order, numbered, prepare, prepare_old
from scheduler.api.validation.formats import (
    as_dict,
    check_metadata,
    is_label,
    is_subdomain,
    not_label,
    not_subdomain,
    required,
)
from scheduler.api.validation.known_fields import ADMISSION_CHECK

SPEC = FieldPath(("spec",))
RULE_ORDER = numbered("AC", 4) + ["UNKNOWN-FIELD"]
_KIND_RE = re.compile(r"[A-Za-z]([-A-Za-z0-9]*[A-Za-z0-9])?")
_PARAMETER_HINTS = {
    "apiGroup": "give the API group of the parameters object, e.g. kueue.x-k8s.io",
    "kind": "give the kind of the parameters object, e.g. MultiKueueConfig",
    "name": "give the name of the parameters object",
}


def validate_admission_check(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Every AdmissionCheck rule (CREATE, or UPDATE when ``old`` is given): pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, ADMISSION_CHECK, errors)
    if obj is None:
        return errors
    check_metadata(obj, errors, namespaced=False)
    spec = as_dict(obj.get("spec"))
    controller = spec.get("controllerName")
    at = SPEC.child("controllerName")
    if controller is None or controller == "":
        errors.append(
            error(
                at,
                text.CONTROLLER_NEEDED,
                origin="S",
                rule="AC-1",
            )
        )
    elif isinstance(controller, str) and len(controller) > 253:
        errors.append(error(at, text.CONTROLLER_LENGTH, origin="S", rule="AC-1"))
    old_obj = prepare_old(old, ADMISSION_CHECK)
    if old_obj is not None:
        previous = as_dict(old_obj.get("spec")).get("controllerName")
        if isinstance(previous, str) and previous != controller:
            errors.append(error(at, text.IMMUTABLE.format(old=previous), origin="C", rule="AC-2"))
    parameters = spec.get("parameters")
    if isinstance(parameters, dict):
        here = SPEC.child("parameters")
        for field, hint in _PARAMETER_HINTS.items():
            if parameters.get(field) in (None, ""):
                errors.append(error(here.child(field), required(hint), origin="S", rule="AC-3"))
        group, kind, name = (
            parameters.get("apiGroup"),
            parameters.get("kind"),
            parameters.get("name"),
        )
        if isinstance(group, str) and group != "" and not is_subdomain(group):
            errors.append(
                error(
                    here.child("apiGroup"),
                    not_subdomain(group, "API group"),
                    origin="S",
                    rule="AC-4",
                )
            )
        if (
            isinstance(kind, str)
            and kind != ""
            and (len(kind) > 63 or _KIND_RE.fullmatch(kind) is None)
        ):
            errors.append(
                error(here.child("kind"), f'"{kind}" is not a valid kind', origin="S", rule="AC-4")
            )
        if isinstance(name, str) and name != "" and not is_label(name):
            errors.append(error(here.child("name"), not_label(name), origin="S", rule="AC-4"))
    return in_rule_order(errors, RULE_ORDER)
