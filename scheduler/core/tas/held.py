"""What admitted workloads' topology placements hold, per domain (pure).

See docs/concepts.md#topology-aware-scheduling.  An admission charges its
placements (one ``DomainCharge`` per pod set and leaf domain) and a release
gives them back; ``HeldPlacements`` keeps those charges per workload and
their totals per leaf, which ``TopologyCache.free`` takes from each leaf's
capacity.  Two hostname-level flavors may select the same nodes: their
charges are totalled per node across both, so neither over-commits a node
the other fills.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from scheduler.api.topology_assignment import HOSTNAME_LABEL, TopologyAssignment
from scheduler.core.tas.tree import TopologyTree, domain_id


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


class HeldPlacements:
    """The charges of admitted placements, per workload and totalled per leaf."""

    def __init__(self) -> None:
        self._charges: dict[str, tuple[DomainCharge, ...]] = {}
        """Workload key -> what its placements hold."""
        self._leaf_totals: dict[str, dict[str, dict[str, int]]] = {}
        """Flavor -> leaf -> what admitted placements hold (flavors not at hostname level)."""
        self._host_totals: dict[str, dict[str, int]] = {}
        """Node -> what admitted placements of every hostname-level flavor hold there."""

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
            subtract(into, charge.amounts(), sign=-sign)
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

    def charges(self, workload: str) -> tuple[DomainCharge, ...]:
        """What ``workload``'s placements hold (nothing when it holds none): pure."""
        return self._charges.get(workload, ())

    def placed_on(self, node: str) -> list[str]:
        """The workloads whose placements put pods on ``node`` (flavors whose lowest level is
        the hostname; a placement in a larger domain names no node): pure."""
        return sorted(
            key
            for key, charges in self._charges.items()
            if any(charge.by_hostname and charge.leaf == node for charge in charges)
        )

    def take_from(
        self,
        free: dict[str, dict[str, int]],
        tree: TopologyTree,
        flavor: str,
        without: Iterable[str] = (),
    ) -> None:
        """Take what admitted placements hold in ``flavor``'s leaves from ``free``, except
        what ``without``'s placements hold there (they count as gone)."""
        held = self._host_totals if tree.by_hostname else self._leaf_totals.get(flavor, {})
        for leaf_id, totals in held.items():
            if leaf_id in free:
                subtract(free[leaf_id], totals)
        for key in without:
            for charge in self._charges.get(key, ()):
                if _counts_in(tree, flavor, charge) and charge.leaf in free:
                    subtract(free[charge.leaf], charge.amounts(), sign=-1)


def _counts_in(tree: TopologyTree, flavor: str, charge: DomainCharge) -> bool:
    """Whether a charge takes room in ``flavor``'s leaves (module docstring): pure."""
    if charge.flavor == flavor:
        return True
    return tree.by_hostname and charge.by_hostname


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


def subtract(into: dict[str, int], amounts: Mapping[str, int], *, sign: int = 1) -> None:
    """``into`` minus ``amounts`` (``sign`` -1: plus), resource by resource, in place."""
    for resource, amount in amounts.items():
        into[resource] = into.get(resource, 0) - sign * amount


__all__ = [
    "DomainCharge",
    "HeldPlacements",
    "leaf_usage",
    "placement_charges",
    "subtract",
]
