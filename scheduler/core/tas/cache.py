"""What topology-aware scheduling knows of the cluster: nodes, pods, topologies, usage (pure).

See docs/concepts.md#topology-aware-scheduling.  The engine feeds this cache
Nodes, the bound pods that kuota did not place by topology (their requests
take room on their node), Topologies and ResourceFlavors; admissions charge
their placements and releases give them back.  From that it answers, per
TAS flavor: the tree of domains (rebuilt only when a node or the flavor
changed) and what is left of each leaf.  What admitted placements hold is
kept by its ``held`` part (``tas.held``).

A flavor is a TAS flavor when its spec names a Topology; it is *ready* only
when that Topology exists (Kueue's ``TopologyNotFound`` otherwise).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scheduler.api.models import ResourceFlavorSpec, Toleration
from scheduler.core.tas.held import HeldPlacements, subtract
from scheduler.core.tas.placement import Usage
from scheduler.core.tas.tree import NodeInfo, TopologyTree, flavor_nodes


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
        self.held = HeldPlacements()
        """What admitted workloads' placements hold (``charge``, ``release``, ``without``)."""
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
                subtract(free[leaf_id], used)
        if not empty:
            self.held.take_from(free, tree, flavor, without)
        for leaf_id, extra in (assumed or {}).items():
            if leaf_id in free:
                subtract(free[leaf_id], extra)
        return free


__all__ = ["TasFlavor", "TopologyCache"]
