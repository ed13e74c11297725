"""Building the cohort forest from ClusterQueue and Cohort specs.

See docs/scheduling.md#the-quota-tree.

A CQ's parent is the cohort it names; a cohort's parent is its
``parentName``.  Cohorts that are named but have no object are implicit:
no quota, no parent.  A parent cycle makes a tree unusable: its cohorts are
left unlinked and the CQs below them are reported so the engine can treat
them as inactive until the cycle is removed.

The forest is rebuilt only when quotas or the structure change (rare); usage
then moves incrementally (``resource_node.add_usage``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scheduler.api.models import ResourceGroup
from scheduler.core.resource_node import QuotaNode, compute_quotas, recompute_cohort_usage
from scheduler.core.resources import FRValues, to_int


@dataclass(frozen=True, slots=True)
class NodeQuota:
    """Quota of one node per FR, as integers."""

    nominal: FRValues
    borrowing_limit: FRValues
    lending_limit: FRValues


def quota_of(groups: tuple[ResourceGroup, ...]) -> NodeQuota:
    """Integer nominal quota and limits per FR of a spec's resource groups: pure."""
    nominal: FRValues = {}
    borrowing: FRValues = {}
    lending: FRValues = {}
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                fr = (str(flavor.name), str(quota.name))
                nominal[fr] = (
                    to_int(quota.name, quota.nominal_quota)
                    if quota.nominal_quota is not None
                    else 0
                )
                if quota.borrowing_limit is not None:
                    borrowing[fr] = to_int(quota.name, quota.borrowing_limit)
                if quota.lending_limit is not None:
                    lending[fr] = to_int(quota.name, quota.lending_limit)
    return NodeQuota(nominal, borrowing, lending)


@dataclass(frozen=True, slots=True)
class CohortSpecInfo:
    parent: str | None
    quota: NodeQuota


@dataclass(slots=True)
class Forest:
    """Every node of the resource tree, by name."""

    cluster_queues: dict[str, QuotaNode] = field(default_factory=dict)
    cohorts: dict[str, QuotaNode] = field(default_factory=dict)
    in_cycle: set[str] = field(default_factory=set)
    """Names of CQs whose cohort tree contains a parent cycle."""


def build_forest(
    *,
    cluster_queues: Mapping[str, tuple[str | None, NodeQuota]],
    cohorts: Mapping[str, CohortSpecInfo],
    usage: Mapping[str, FRValues],
) -> Forest:
    """The forest for these specs, with quotas computed and CQ ``usage`` propagated: pure.

    ``cluster_queues`` maps a CQ name to (cohort name, quota); ``usage`` maps a
    CQ name to the usage of its reserving workloads.
    """
    forest = Forest()
    for name in sorted(cohorts):
        forest.cohorts[name] = _node(name, cohorts[name].quota, is_cohort=True)
    for name in sorted(cluster_queues):
        cohort_name = cluster_queues[name][0]
        if cohort_name and cohort_name not in forest.cohorts:
            forest.cohorts[cohort_name] = QuotaNode(cohort_name, is_cohort=True)
    for spec in list(cohorts.values()):
        if spec.parent and spec.parent not in forest.cohorts:
            forest.cohorts[spec.parent] = QuotaNode(spec.parent, is_cohort=True)
    cyclic = _cyclic_cohorts(cohorts)
    for name in sorted(forest.cohorts):
        info = cohorts.get(name)
        if info is not None and info.parent and name not in cyclic:
            _link(forest.cohorts[info.parent], forest.cohorts[name])
    for name in sorted(cluster_queues):
        cohort_name, quota = cluster_queues[name]
        node = _node(name, quota, is_cohort=False)
        node.usage = dict(usage.get(name, {}))
        forest.cluster_queues[name] = node
        if cohort_name:
            _link(forest.cohorts[cohort_name], node)
            if cohort_name in cyclic:
                forest.in_cycle.add(name)
    for node in [*forest.cohorts.values(), *forest.cluster_queues.values()]:
        if node.parent is None:
            compute_quotas(node)
            recompute_cohort_usage(node)
    return forest


def _node(name: str, quota: NodeQuota, *, is_cohort: bool) -> QuotaNode:
    node = QuotaNode(name, is_cohort=is_cohort)
    node.nominal = dict(quota.nominal)
    node.borrowing_limit = dict(quota.borrowing_limit)
    node.lending_limit = dict(quota.lending_limit)
    return node


def _link(parent: QuotaNode, child: QuotaNode) -> None:
    child.parent = parent
    parent.children.append(child)


def _cyclic_cohorts(cohorts: Mapping[str, CohortSpecInfo]) -> set[str]:
    """Cohorts on a parent cycle or below one (their trees are unusable): pure."""
    cyclic: set[str] = set()
    for start in cohorts:
        seen: list[str] = []
        name: str | None = start
        while name is not None and name in cohorts and name not in seen:
            seen.append(name)
            name = cohorts[name].parent
        if name is not None and name in seen:
            cyclic.update(seen)
    # Cohorts whose ancestors are cyclic are unusable too.
    changed = True
    while changed:
        changed = False
        for name, info in cohorts.items():
            if name not in cyclic and info.parent in cyclic:
                cyclic.add(name)
                changed = True
    return cyclic


__all__ = ["CohortSpecInfo", "Forest", "NodeQuota", "build_forest", "quota_of"]
