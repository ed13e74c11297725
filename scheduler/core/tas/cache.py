"""What topology-aware scheduling knows of the cluster: nodes, pods, topologies, usage (pure).

See docs/concepts.md#topology-aware-scheduling.  The engine feeds this cache
Nodes, the bound pods that kuota did not place by topology (their requests
take room on their node), Topologies and ResourceFlavors; admissions charge
their placements and releases give them back.  From that it answers, per
TAS flavor: the tree of domains (rebuilt only when a node or the flavor
changed) and what is left of each leaf.

A flavor is a TAS flavor when its spec names a Topology; it is *ready* only
when that Topology exists (Kueue's ``TopologyNotFound`` otherwise).  Two
hostname-level flavors may select the same nodes: their usage is counted
per node across both, so neither over-commits a node the other fills.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from scheduler.api.models import ResourceFlavorSpec, Toleration
from scheduler.api.topology_assignment import HOSTNAME_LABEL, TopologyAssignment
from scheduler.core.tas.placement import Usage
from scheduler.core.tas.tree import NodeInfo, TopologyTree, domain_id, flavor_nodes


@dataclass(frozen=True, slots=True)
class DomainCharge:
    """Pods of one workload in one leaf of one flavor: per-pod requests times ``count``."""

    flavor: str
    leaf: str
    per_pod: Mapping[str, int]
    count: int
    by_hostname: bool = False
    """The leaf is a node (the flavor's lowest level is the hostname)."""

    def amounts(self) -> dict[str, int]:
        total = {resource: amount * self.count for resource, amount in self.per_pod.items()}
        total["pods"] = total.get("pods", 0) + self.count
        return total


@dataclass(frozen=True, slots=True)
class TasFlavor:
    """A TAS flavor as placement needs it."""

    name: str
    topology: str
    node_labels: Mapping[str, str]
    tolerations: tuple[Toleration, ...]


class TopologyCache:
    """Nodes, non-TAS pods, Topologies, TAS flavors and the usage of admitted placements."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._generation = 0
        """Changes with every node change that matters to a tree."""
        self._topologies: dict[str, tuple[str, ...]] = {}
        self._flavors: dict[str, TasFlavor] = {}
        self._pods: dict[str, tuple[str, dict[str, int]]] = {}
        """Non-TAS pod key -> (node, requests with the pod itself)."""
        self._node_usage: dict[str, dict[str, int]] = {}
        self._charges: dict[str, tuple[DomainCharge, ...]] = {}
        """Workload key -> what its placements hold."""
        self._leaf_totals: dict[str, dict[str, dict[str, int]]] = {}
        """Flavor -> leaf -> what admitted placements hold (flavors not at hostname level)."""
        self._host_totals: dict[str, dict[str, int]] = {}
        """Node -> what admitted placements of every hostname-level flavor hold there."""
        self._trees: dict[str, tuple[int, tuple[str, ...], TopologyTree]] = {}
        self.pods_known = True
        """Whether every pod on the nodes is known; until then no TAS flavor is ready (a live
        scheduler lists every Pod first)."""

    # --- inputs ----------------------------------------------------------------------

    def apply_node(self, node: NodeInfo) -> bool:
        """Insert or update a node; whether anything placement reads changed."""
        if self._nodes.get(node.name) == node:
            return False
        self._nodes[node.name] = node
        self._generation += 1
        return True

    def node(self, name: str) -> NodeInfo | None:
        """The node as last applied, or None when unknown or removed."""
        return self._nodes.get(name)

    def remove_node(self, name: str) -> bool:
        if self._nodes.pop(name, None) is None:
            return False
        self._generation += 1
        return True

    def apply_pod(self, key: str, node: str | None, requests: Mapping[str, int] | None) -> bool:
        """A pod bound to ``node`` that is not placed by topology (None: no longer counted).

        Returns whether capacity may have come free.
        """
        old = self._pods.pop(key, None)
        freed = False
        if old is not None:
            self._add_node_usage(old[0], old[1], -1)
            freed = True
        if node and requests is not None:
            counted = {**requests, "pods": requests.get("pods", 0) + 1}
            self._pods[key] = (node, counted)
            self._add_node_usage(node, counted, 1)
            if (
                old is not None
                and old[0] == node
                and all(counted.get(r, 0) >= a for r, a in old[1].items())
            ):
                freed = False
        return freed

    def _add_node_usage(self, node: str, amounts: Mapping[str, int], sign: int) -> None:
        usage = self._node_usage.setdefault(node, {})
        for resource, amount in amounts.items():
            usage[resource] = usage.get(resource, 0) + sign * amount
        if usage.get("pods", 0) <= 0:
            self._node_usage.pop(node, None)

    def apply_topology(self, name: str, levels: Sequence[str] | None) -> list[str]:
        """A Topology came, changed or went (None); the TAS flavors that name it."""
        if levels is None:
            self._topologies.pop(name, None)
        else:
            self._topologies[name] = tuple(levels)
        return sorted(f.name for f in self._flavors.values() if f.topology == name)

    def apply_flavor(self, name: str, spec: ResourceFlavorSpec | None) -> None:
        """A ResourceFlavor came, changed or went (None)."""
        self._trees.pop(name, None)
        if spec is None or not spec.topology_name:
            self._flavors.pop(name, None)
            return
        self._flavors[name] = TasFlavor(
            name=name,
            topology=str(spec.topology_name),
            node_labels=dict(spec.node_labels),
            tolerations=tuple(spec.tolerations),
        )

    # --- reading ---------------------------------------------------------------------

    def flavor(self, name: str) -> TasFlavor | None:
        return self._flavors.get(name)

    def any_flavor(self) -> bool:
        """Whether any ResourceFlavor names a Topology: pure."""
        return bool(self._flavors)

    def missing_topology(self, flavor: str) -> str | None:
        """The Topology a TAS flavor names when it does not exist, else None: pure."""
        info = self._flavors.get(flavor)
        if info is None or info.topology in self._topologies:
            return None
        return info.topology

    def levels(self, flavor: str) -> tuple[str, ...] | None:
        """The levels of a ready TAS flavor's Topology; None otherwise: pure."""
        info = self._flavors.get(flavor)
        if info is None or not self.pods_known:
            return None
        return self._topologies.get(info.topology)

    def tree(self, flavor: str) -> TopologyTree | None:
        """The domains of a ready TAS flavor's nodes (cached until a node or level changes)."""
        info, levels = self._flavors.get(flavor), self.levels(flavor)
        if info is None or levels is None:
            return None
        cached = self._trees.get(flavor)
        if cached is not None and cached[0] == self._generation and cached[1] == levels:
            return cached[2]
        tree = TopologyTree(levels, flavor_nodes(self._nodes.values(), info.node_labels, levels))
        self._trees[flavor] = (self._generation, levels, tree)
        return tree

    def free(
        self,
        flavor: str,
        *,
        without: Iterable[str] = (),
        empty: bool = False,
        assumed: Mapping[str, Mapping[str, int]] | None = None,
    ) -> Usage:
        """What is left of each leaf of ``flavor``: pure.

        ``without``: workloads whose placements count as gone (preemption
        victims); ``empty``: as if no TAS workload held anything (Kueue's
        "simulate empty"); ``assumed``: leaf usage of pod sets placed earlier
        in the same attempt.
        """
        tree = self.tree(flavor)
        if tree is None:
            return {}
        free: dict[str, dict[str, int]] = {}
        for leaf_id, leaf in tree.leaves.items():
            free[leaf_id] = dict(leaf.capacity or {})
        for node, leaf_id in tree.node_leaf.items():
            used = self._node_usage.get(node)
            if used:
                _subtract(free[leaf_id], used)
        if not empty:
            held = self._host_totals if tree.by_hostname else self._leaf_totals.get(flavor, {})
            for leaf_id, totals in held.items():
                if leaf_id in free:
                    _subtract(free[leaf_id], totals)
            for key in without:
                for charge in self._charges.get(key, ()):
                    if self._counts_in(tree, flavor, charge) and charge.leaf in free:
                        _subtract(free[charge.leaf], charge.amounts(), sign=-1)
        for leaf_id, extra in (assumed or {}).items():
            if leaf_id in free:
                _subtract(free[leaf_id], extra)
        return free

    def _counts_in(self, tree: TopologyTree, flavor: str, charge: DomainCharge) -> bool:
        """Whether a charge takes room in ``flavor``'s leaves (module docstring): pure."""
        if charge.flavor == flavor:
            return True
        return tree.by_hostname and charge.by_hostname

    def placed_on(self, node: str) -> list[str]:
        """The workloads whose placements put pods on ``node`` (flavors whose lowest level is
        the hostname; a placement in a larger domain names no node): pure."""
        return sorted(
            key
            for key, charges in self._charges.items()
            if any(charge.by_hostname and charge.leaf == node for charge in charges)
        )

    def charges(self, workload: str) -> tuple[DomainCharge, ...]:
        return self._charges.get(workload, ())

    # --- admitted placements ---------------------------------------------------------

    def charge(self, workload: str, charges: Iterable[DomainCharge]) -> None:
        """Count what an admitted workload's placements hold (replacing any earlier count)."""
        self.release(workload)
        held = tuple(charges)
        if not held:
            return
        self._charges[workload] = held
        self._total(held, 1)

    def release(self, workload: str) -> bool:
        """Give back what ``workload``'s placements held; whether it held anything."""
        held = self._charges.pop(workload, None)
        if held is None:
            return False
        self._total(held, -1)
        return True

    def _total(self, charges: Iterable[DomainCharge], sign: int) -> None:
        for charge in charges:
            totals = (
                self._host_totals
                if charge.by_hostname
                else self._leaf_totals.setdefault(charge.flavor, {})
            )
            into = totals.setdefault(charge.leaf, {})
            _subtract(into, charge.amounts(), sign=-sign)
            if into.get("pods", 0) <= 0:
                totals.pop(charge.leaf, None)

    @contextmanager
    def without(self, workloads: Iterable[str]) -> Iterator[None]:
        """Count the placements of ``workloads`` as gone for a while; always restored."""
        removed = [(key, self._charges[key]) for key in workloads if key in self._charges]
        for key, _ in removed:
            self.release(key)
        try:
            yield
        finally:
            for key, charges in removed:
                self.charge(key, charges)

    def holders(self) -> Mapping[str, tuple[DomainCharge, ...]]:
        return self._charges


def placement_charges(
    flavor: str, placement: TopologyAssignment, per_pod: Mapping[str, int]
) -> list[DomainCharge]:
    """The charges of one pod set's placement in ``flavor``: pure."""
    by_hostname = bool(placement.levels) and placement.levels[-1] == HOSTNAME_LABEL
    return [
        DomainCharge(
            flavor=flavor,
            leaf=domain_id(domain.values),
            per_pod=per_pod,
            count=domain.count,
            by_hostname=by_hostname,
        )
        for domain in placement.domains
        if domain.count > 0
    ]


def leaf_usage(charges: Iterable[DomainCharge]) -> dict[str, dict[str, int]]:
    """Leaf id -> summed amounts of ``charges`` (for ``free(assumed=...)``): pure."""
    usage: dict[str, dict[str, int]] = {}
    for charge in charges:
        into = usage.setdefault(charge.leaf, {})
        for resource, amount in charge.amounts().items():
            into[resource] = into.get(resource, 0) + amount
    return usage


def _subtract(into: dict[str, int], amounts: Mapping[str, int], *, sign: int = 1) -> None:
    for resource, amount in amounts.items():
        into[resource] = into.get(resource, 0) - sign * amount


__all__ = [
    "DomainCharge",
    "TasFlavor",
    "TopologyCache",
    "leaf_usage",
    "placement_charges",
]
