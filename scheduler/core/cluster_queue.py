"""A ClusterQueue as the engine keeps it: its spec reduced to what scheduling reads.

Built once per ``apply`` of a ClusterQueue; the API object itself is not kept
in scheduling structures.  The quota node (``node``) is attached when the
forest is (re)built.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from scheduler.api.models import (
    ClusterQueue,
    ClusterQueuePreemption,
    FlavorFungibility,
    LabelSelector,
)
from scheduler.core.admission_checks import CheckRule, check_rules
from scheduler.core.resource_node import QuotaNode


@dataclass(frozen=True, slots=True)
class GroupInfo:
    """One resource group: the resources it covers and its flavors in order."""

    covered: tuple[str, ...]
    flavors: tuple[str, ...]


class ClusterQueueInfo:
    """The scheduling-relevant part of a ClusterQueue spec."""

    __slots__ = (
        "name",
        "cohort",
        "groups",
        "group_of",
        "covers_pods",
        "queueing_strategy",
        "namespace_selector",
        "fungibility",
        "preemption",
        "stop_policy",
        "flavor_names",
        "admission_checks",
        "check_rules",
        "node",
        "weight",
    )

    def __init__(self, cq: ClusterQueue) -> None:
        spec = cq.spec
        self.name: str = cq.name
        self.cohort: str | None = spec.cohort_name or None
        self.groups: tuple[GroupInfo, ...] = tuple(
            GroupInfo(
                covered=tuple(str(name) for name in group.covered_resources),
                flavors=tuple(str(flavor.name) for flavor in group.flavors),
            )
            for group in spec.resource_groups
        )
        self.group_of: dict[str, int] = {
            resource: index for index, group in enumerate(self.groups) for resource in group.covered
        }
        self.covers_pods: bool = "pods" in self.group_of
        self.queueing_strategy: str = spec.queueing_strategy
        self.namespace_selector: LabelSelector | None = spec.namespace_selector
        self.fungibility: FlavorFungibility = spec.flavor_fungibility
        self.preemption: ClusterQueuePreemption = spec.preemption
        self.stop_policy: str = spec.stop_policy
        self.flavor_names: tuple[str, ...] = tuple(
            flavor for group in self.groups for flavor in group.flavors
        )
        strategy = spec.admission_checks_strategy
        rules = strategy.admission_checks if strategy is not None else ()
        self.admission_checks: tuple[str, ...] = tuple(rule.name for rule in rules)
        self.check_rules: tuple[CheckRule, ...] = check_rules(
            ((rule.name, tuple(rule.on_flavors)) for rule in rules), self.flavor_names
        )
        """The admission checks with the flavors each covers."""
        self.node: QuotaNode | None = None
        weight = spec.fair_sharing.weight if spec.fair_sharing is not None else None
        self.weight: Fraction = Fraction(weight.as_decimal()) if weight is not None else Fraction(1)
        """``spec.fairSharing.weight`` (docs/scheduling.md#weights)."""

    @property
    def strict_fifo(self) -> bool:
        return self.queueing_strategy == "StrictFIFO"


__all__ = ["ClusterQueueInfo", "GroupInfo"]
