"""Does a pod set fit the nodes a flavor stands for? (docs/scheduling.md#flavor-eligibility)

A ResourceFlavor is a name plus node-matching data.  A pod set may use it
when every ``NoSchedule``/``NoExecute`` taint of the flavor is tolerated (by
the pod's tolerations or the flavor's own) and when the pod's node selection,
*reduced to the label keys this flavor knows about*, matches a fake node
carrying exactly the flavor's labels.  The same selector logic evaluates a
ClusterQueue's ``namespaceSelector`` against a Namespace's labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler.api.models import (
    LabelSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Taint,
    Toleration,
)

_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Kubernetes ``Toleration.ToleratesTaint``: pure."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    if toleration.operator in ("Equal", ""):
        return toleration.value == taint.value
    return False


def first_untolerated_taint(
    taints: Iterable[Taint], tolerations: Iterable[Toleration]
) -> Taint | None:
    """The first blocking taint none of ``tolerations`` tolerates: pure.

    ``PreferNoSchedule`` taints never block.
    """
    tolerations = tuple(tolerations)
    for taint in taints:
        if taint.effect not in _BLOCKING_EFFECTS:
            continue
        if not any(tolerates(toleration, taint) for toleration in tolerations):
            return taint
    return None


def describe_taint(taint: Taint) -> str:
    """The struct-like form Kueue prints: ``{key value effect <nil>}``: pure."""
    return f"{{{taint.key} {taint.value} {taint.effect} <nil>}}"


def requirement_matches(requirement: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    """One node-selector or label-selector requirement against labels: pure."""
    operator = requirement.operator
    present = requirement.key in labels
    value = labels.get(requirement.key)
    if operator == "In":
        return present and value in requirement.values
    if operator == "NotIn":
        return not present or value not in requirement.values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(requirement.values) == 1:
        try:
            actual, bound = int(value or ""), int(requirement.values[0])
        except ValueError:
            return False
        return actual > bound if operator == "Gt" else actual < bound
    return False


def matches_flavor_labels(
    node_selector: Mapping[str, str],
    required_affinity: tuple[NodeSelectorTerm, ...] | None,
    flavor_labels: Mapping[str, str],
) -> bool:
    """Whether the pod's node selection, reduced to the flavor's label keys, matches it: pure.

    Reduction: keep ``nodeSelector`` entries and affinity expressions
    whose key is one of the flavor's label keys; if any affinity term becomes
    empty the whole required affinity is dropped (terms are ORed).
    """
    for key, wanted in node_selector.items():
        if key in flavor_labels and flavor_labels[key] != wanted:
            return False
    if not required_affinity:
        return True
    reduced = [
        [expr for expr in term.match_expressions if expr.key in flavor_labels]
        for term in required_affinity
    ]
    if any(not term for term in reduced):
        return True
    return any(all(requirement_matches(expr, flavor_labels) for expr in term) for term in reduced)


def selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """A label selector against labels; ``None`` matches nothing, empty matches everything: pure."""
    if selector is None:
        return False
    for key, wanted in selector.match_labels.items():
        if labels.get(key) != wanted:
            return False
    return all(
        requirement_matches(
            NodeSelectorRequirement(key=r.key, operator=r.operator, values=r.values), labels
        )
        for r in selector.match_expressions
    )


__all__ = [
    "describe_taint",
    "first_untolerated_taint",
    "matches_flavor_labels",
    "requirement_matches",
    "selector_matches",
    "tolerates",
]
