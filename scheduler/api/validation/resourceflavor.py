"""ResourceFlavor rules (docs/validation.md#resourceflavor).

The toleration checks (RF-11 … RF-16) are also applied to the tolerations an
admission check injects into a Workload (WL-39), so they take the path and
rule identifiers as parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.validation.common import in_rule_order, numbered, prepare, prepare_old
from scheduler.api.validation.formats import (
    as_dict,
    check_label_map,
    check_max,
    check_metadata,
    immutable,
    is_label_value,
    is_qualified_name,
    is_subdomain,
    mappings,
    not_label_value,
    not_qualified_name,
    not_subdomain,
    required,
    unsupported,
)
from scheduler.api.validation.known_fields import RESOURCE_FLAVOR

SPEC = FieldPath(("spec",))
RULE_ORDER = numbered("RF", 19) + ["UNKNOWN-FIELD"]

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")


def check_taints(taints: object, path: FieldPath, errors: list[FieldError]) -> None:
    """RF-3 … RF-9 on a cleaned taint list."""
    check_max(taints, 8, path, errors, rule="RF-3")
    seen: set[tuple[str, str]] = set()
    for i, taint in mappings(taints):
        at = path.index(i)
        key, value, effect = taint.get("key"), taint.get("value"), taint.get("effect")
        if key is None or key == "":
            errors.append(
                error(at.child("key"), required("give the taint key"), origin="S", rule="RF-4")
            )
        elif isinstance(key, str) and not is_qualified_name(key):
            errors.append(
                error(
                    at.child("key"), not_qualified_name(key, "taint key"), origin="W", rule="RF-5"
                )
            )
        if isinstance(value, str) and not is_label_value(value):
            errors.append(error(at.child("value"), not_label_value(value), origin="W", rule="RF-6"))
        if effect is None:
            errors.append(
                error(
                    at.child("effect"),
                    required("use NoSchedule, PreferNoSchedule or NoExecute"),
                    origin="S",
                    rule="RF-7",
                )
            )
        elif isinstance(effect, str) and effect not in TAINT_EFFECTS:
            errors.append(
                error(
                    at.child("effect"), unsupported(effect, TAINT_EFFECTS), origin="C", rule="RF-8"
                )
            )
        if isinstance(key, str) and isinstance(effect, str):
            if (key, effect) in seen:
                errors.append(
                    error(
                        at,
                        f'duplicate taint "{key}:{effect}": taints must be unique by key and '
                        "effect",
                        origin="W",
                        rule="RF-9",
                    )
                )
            seen.add((key, effect))


def check_tolerations(
    tolerations: object,
    path: FieldPath,
    errors: list[FieldError],
    *,
    rule_of: Mapping[str, str] | None = None,
) -> None:
    """RF-10 … RF-16 on a cleaned toleration list; ``rule_of`` renames rule ids (WL-39)."""

    def rule(name: str) -> str:
        return rule_of.get(name, name) if rule_of else name

    check_max(tolerations, 8, path, errors, rule=rule("RF-10"))
    for i, toleration in mappings(tolerations):
        at = path.index(i)
        key, operator = toleration.get("key"), toleration.get("operator")
        value, effect = toleration.get("value"), toleration.get("effect")
        effective_operator = "Equal" if operator in (None, "") else operator
        if (
            (key is None or key == "")
            and isinstance(effective_operator, str)
            and effective_operator != "Exists"
        ):
            errors.append(
                error(
                    at.child("operator"),
                    "must be Exists when key is empty (an empty key with Exists tolerates every "
                    "taint)",
                    origin="C",
                    rule=rule("RF-11"),
                )
            )
        if "tolerationSeconds" in toleration and effect != "NoExecute":
            errors.append(
                error(
                    at.child("effect"),
                    "must be NoExecute when tolerationSeconds is set",
                    origin="C",
                    rule=rule("RF-12"),
                )
            )
        if isinstance(operator, str) and operator != "" and operator not in TOLERATION_OPERATORS:
            errors.append(
                error(
                    at.child("operator"),
                    unsupported(operator, TOLERATION_OPERATORS) + " (Equal is the default)",
                    origin="C",
                    rule=rule("RF-13"),
                )
            )
        if operator == "Exists" and isinstance(value, str) and value != "":
            errors.append(
                error(
                    at.child("value"),
                    "must be empty when operator is Exists",
                    origin="C",
                    rule=rule("RF-14"),
                )
            )
        if isinstance(effect, str) and effect != "" and effect not in TAINT_EFFECTS:
            errors.append(
                error(
                    at.child("effect"),
                    unsupported(effect, TAINT_EFFECTS),
                    origin="C",
                    rule=rule("RF-15"),
                )
            )
        if isinstance(key, str) and key != "" and not is_qualified_name(key):
            errors.append(
                error(
                    at.child("key"),
                    not_qualified_name(key, "toleration key"),
                    origin="W",
                    rule=rule("RF-16"),
                )
            )


def validate_resource_flavor(
    new: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Every ResourceFlavor rule (CREATE, or UPDATE when ``old`` is given): pure, never raises."""
    errors: list[FieldError] = []
    obj = prepare(new, RESOURCE_FLAVOR, errors)
    if obj is None:
        return errors
    check_metadata(obj, errors, namespaced=False)
    spec = as_dict(obj.get("spec"))
    labels = spec.get("nodeLabels")
    check_max(labels, 8, SPEC.child("nodeLabels"), errors, rule="RF-1")
    check_label_map(
        labels, SPEC.child("nodeLabels"), errors, rule="RF-2", with_key_in_value_message=True
    )
    check_taints(spec.get("nodeTaints"), SPEC.child("nodeTaints"), errors)
    check_tolerations(spec.get("tolerations"), SPEC.child("tolerations"), errors)
    topology = spec.get("topologyName")
    if isinstance(topology, str) and topology != "" and not is_subdomain(topology):
        errors.append(
            error(
                SPEC.child("topologyName"),
                not_subdomain(topology, "topology name"),
                origin="S",
                rule="RF-17",
            )
        )
    if isinstance(topology, str) and topology != "" and (labels is None or labels == {}):
        errors.append(
            error(
                SPEC.child("nodeLabels"),
                "a flavor with a topologyName needs at least one node label",
                origin="C",
                rule="RF-18",
            )
        )
    old_obj = prepare_old(old, RESOURCE_FLAVOR)
    if old_obj is not None:
        old_topology = as_dict(old_obj.get("spec")).get("topologyName")
        if isinstance(old_topology, str) and old_topology != "" and topology != old_topology:
            errors.append(
                error(
                    SPEC.child("topologyName"),
                    immutable(old_topology, " once set"),
                    origin="C",
                    rule="RF-19",
                )
            )
    return in_rule_order(errors, RULE_ORDER)
