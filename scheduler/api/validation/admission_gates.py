"""The ``kueue.x-k8s.io/admission-gated-by`` annotation (WL-20/WL-62, JOB-12/JOB-U11).

A comma-separated list of gates, each a domain-prefixed path such as
``example.com/provisioner``; the list may only shrink after creation.
"""

from __future__ import annotations

import re

from scheduler.api.field import FieldError, FieldPath, Origin, error
from scheduler.api.refs import ADMISSION_GATED_BY_ANNOTATION as ADMISSION_GATED_BY
from scheduler.api.validation.formats import is_subdomain

_PATH_RE = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")


def split_gates(value: str) -> list[str]:
    """The gate names of the annotation value, whitespace trimmed: pure."""
    return [gate.strip() for gate in value.split(",")]


def _is_domain_prefixed_path(gate: str) -> bool:
    host, slash, path = gate.partition("/")
    return bool(slash) and is_subdomain(host) and _PATH_RE.fullmatch(path) is not None


def check_gated_by(
    annotations: object, errors: list[FieldError], *, rule: str, origin: Origin = "W"
) -> None:
    """WL-20 / JOB-12: the annotation, when present, is well formed."""
    if not isinstance(annotations, dict) or not isinstance(
        annotations.get(ADMISSION_GATED_BY), str
    ):
        return
    at = FieldPath(("metadata", "annotations")).key(ADMISSION_GATED_BY)
    gates = split_gates(annotations[ADMISSION_GATED_BY])
    if any(gate == "" for gate in gates):
        errors.append(error(at, "cannot contain empty gate names", origin=origin, rule=rule))
    seen: set[str] = set()
    for gate in gates:
        if gate == "":
            continue
        if gate in seen:
            errors.append(error(at, f"duplicate gate name: {gate}", origin=origin, rule=rule))
            continue
        seen.add(gate)
        if not _is_domain_prefixed_path(gate):
            errors.append(
                error(at, f'"{gate}" must look like example.com/name', origin=origin, rule=rule)
            )
        if len(gate) > 63:
            errors.append(
                error(at, f'gate "{gate}" is longer than 63 characters', origin=origin, rule=rule)
            )


def check_gates_only_shrink(
    old_annotations: object, new_annotations: object, errors: list[FieldError], *, rule: str
) -> None:
    """WL-62 / JOB-U11: gates can be set at creation only, then only removed."""
    old_value = (
        old_annotations.get(ADMISSION_GATED_BY) if isinstance(old_annotations, dict) else None
    )
    new_value = (
        new_annotations.get(ADMISSION_GATED_BY) if isinstance(new_annotations, dict) else None
    )
    if not isinstance(new_value, str) or new_value.strip() == "":
        return
    at = FieldPath(("metadata", "annotations")).key(ADMISSION_GATED_BY)
    if not isinstance(old_value, str) or old_value.strip() == "":
        errors.append(
            error(at, "admission gates can only be set when the object is created", rule=rule)
        )
        return
    if set(split_gates(new_value)) - set(split_gates(old_value)):
        errors.append(error(at, "gates can only be removed, not added", rule=rule))
