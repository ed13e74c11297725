"""Topology rules (TOPO-*; docs/validation.md#other-kinds).

kuota does not implement topology-aware scheduling; it stores and validates
Topology objects so that ResourceFlavors may reference them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import in_rule_order, numbered, prepare, prepare_old
from scheduler.api.validation.formats import (
    as_dict,
    check_max,
    check_metadata,
    is_qualified_name,
    mappings,
    not_qualified_name,
    required,
    too_few,
)
from scheduler.api.validation.known_fields import TOPOLOGY

LEVELS = FieldPath(("spec", "levels"))
RULE_ORDER = numbered("TOPO", 4) + ["UNKNOWN-FIELD"]
HOSTNAME = "kubernetes.io/hostname"


def _node_labels(spec: Mapping[str, Any]) -> list[object]:
    return [level.get("nodeLabel") for _, level in mappings(spec.get("levels"))]


def validate_topology(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Every Topology rule (CREATE, or UPDATE when ``old`` is given): pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, TOPOLOGY, errors)
    if obj is None:
        return errors
    check_metadata(obj, errors, namespaced=False)
    spec = as_dict(obj.get("spec"))
    levels = spec.get("levels")
    if levels is None or levels == []:
        errors.append(error(LEVELS, too_few(1), origin="S", rule="TOPO-1"))
    check_max(levels, 16, LEVELS, errors, rule="TOPO-1")
    for position, level in mappings(levels):
        label = level.get("nodeLabel")
        at = LEVELS.index(position).child("nodeLabel")
        if label is None or label == "":
            errors.append(
                error(at, required("give the node label of this level"), origin="S", rule="TOPO-1")
            )
        elif isinstance(label, str) and len(label) > 316:
            errors.append(error(at, "must be at most 316 characters", origin="S", rule="TOPO-1"))
        elif isinstance(label, str) and not is_qualified_name(label):
            errors.append(
                error(at, not_qualified_name(label, "node label"), origin="S", rule="TOPO-1")
            )
    labels = [label for label in _node_labels(spec) if isinstance(label, str)]
    if len(set(labels)) != len(labels):
        errors.append(error(LEVELS, "must not contain duplicates", origin="C", rule="TOPO-2"))
    if HOSTNAME in labels[:-1]:
        errors.append(
            error(
                LEVELS, f"{HOSTNAME} may only be the last (lowest) level", origin="C", rule="TOPO-3"
            )
        )
    old_obj = prepare_old(old, TOPOLOGY)
    if old_obj is not None:
        before, after = _node_labels(as_dict(old_obj.get("spec"))), _node_labels(spec)
        if before != after and not (
            before and after and before[-1] == HOSTNAME and after[-1] == HOSTNAME
        ):
            errors.append(
                error(
                    LEVELS,
                    f"levels can only change when {HOSTNAME} is the last level both before and "
                    "after the change",
                    origin="C",
                    rule="TOPO-4",
                )
            )
    return in_rule_order(errors, RULE_ORDER)
