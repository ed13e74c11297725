"""Quota and topology decided together: a workload's pod sets placed in its TAS flavors (pure).

See docs/concepts.md#topology-aware-scheduling.  Flavor assignment decides
the quota; for every pod set that asks for topology-aware scheduling (or is
in a ClusterQueue of TAS flavors only) this module then places its pods in
the topology of its TAS flavor, as Kueue v0.19 does:

* the quota fits: the pods are placed in what the nodes have left; when no
  domain holds them the pod set needs preemption (its FRs all do);
* preemption is needed: the pods are placed as if no TAS workload held
  anything; when even that fails nothing but more nodes helps, and the pod
  set does not fit (``TopologyPlacementFailed``);
* a preemptor's victims are chosen so that both the quota and the placement
  fit once they are gone (``placement_fits`` is the preemption search's
  extra test).

In a ClusterQueue with a MultiKueue admission check the placement is left
to the worker cluster: the pod set is admitted with
``delayedTopologyRequest: Pending``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scheduler.api.models import ResourceFlavorSpec
from scheduler.api.topology_assignment import TopologyAssignment
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.decisions import PodSetAdmission
from scheduler.core.flavor_assignment import Assignment, Mode, PodSetResult, requests_topology
from scheduler.core.pending_reasons import TopologyUnplaced
from scheduler.core.tas.cache import TopologyCache
from scheduler.core.tas.fit import PlacementFailure, count_in
from scheduler.core.tas.held import DomainCharge, leaf_usage, placement_charges
from scheduler.core.tas.placement import PodSetPlacementRequest, place_pod_sets
from scheduler.core.workload import PodSetInfo

PLACEMENT_FAILED = "TopologyPlacementFailed"


@dataclass(frozen=True, slots=True)
class _Wanted:
    """A pod set that asks for a placement, with its assignment result."""

    pod_set: PodSetInfo
    result: PodSetResult
    implied: bool


@dataclass(frozen=True, slots=True)
class Unplaced:
    """The first pod set that could not be placed, and why."""

    pod_set: str
    flavor: str
    reason: str


Placements = dict[str, tuple[str, TopologyAssignment]]
"""Pod set -> (TAS flavor, where its pods go)."""


def _wanted(
    cq: ClusterQueueInfo,
    pod_sets: Sequence[PodSetInfo],
    assignment: Assignment,
    flavors: Mapping[str, ResourceFlavorSpec],
) -> list[_Wanted]:
    by_name = {pod_set.name: pod_set for pod_set in pod_sets}
    wanted = []
    for result in assignment.pod_sets:
        pod_set = by_name.get(result.name)
        if pod_set is None or result.mode == Mode.NO_FIT or result.count == 0:
            continue
        requested, implied = requests_topology(cq, pod_set, flavors)
        if requested:
            wanted.append(_Wanted(pod_set, result, implied))
    return wanted


def _tas_flavor(
    result: PodSetResult, flavors: Mapping[str, ResourceFlavorSpec]
) -> tuple[str | None, str]:
    """(the one TAS flavor among a pod set's flavors, or None and why): pure."""
    names = sorted(
        {
            name
            for name in result.flavors.values()
            if (spec := flavors.get(name)) is not None and spec.topology_name
        }
    )
    if len(names) == 1:
        return names[0], ""
    if not names:
        return None, "no TAS flavor assigned"
    return None, f"multiple TAS flavors assigned: {', '.join(names)}"


def needs_placement(
    cq: ClusterQueueInfo,
    pod_sets: Sequence[PodSetInfo],
    assignment: Assignment,
    flavors: Mapping[str, ResourceFlavorSpec],
) -> bool:
    """Whether any pod set with a flavor asks to be placed in a topology: pure."""
    return bool(_wanted(cq, pod_sets, assignment, flavors))


def place_workload(
    cq: ClusterQueueInfo,
    pod_sets: Sequence[PodSetInfo],
    assignment: Assignment,
    flavors: Mapping[str, ResourceFlavorSpec],
    cache: TopologyCache,
    *,
    without: Iterable[str] = (),
    empty: bool = False,
) -> Placements | Unplaced:
    """Place every pod set that asks for it, flavor by flavor (sorted): pure.

    ``without``: workloads counted as gone (preemption victims); ``empty``:
    as if no TAS workload held anything.
    """
    gone = tuple(without)
    by_flavor: dict[str, list[PodSetPlacementRequest]] = {}
    for item in _wanted(cq, pod_sets, assignment, flavors):
        flavor, why = _tas_flavor(item.result, flavors)
        if flavor is None:
            return Unplaced(item.result.name, "", why)
        spec = flavors[flavor]
        pod_set = item.pod_set
        by_flavor.setdefault(flavor, []).append(
            PodSetPlacementRequest(
                name=pod_set.name,
                count=item.result.count,
                per_pod=pod_set.tas_per_pod,
                request=pod_set.topology,
                implied=item.implied,
                tolerations=(*pod_set.tolerations, *spec.tolerations),
                node_selector=pod_set.node_selector,
                affinity=pod_set.affinity,
            )
        )
    placements: Placements = {}
    taken: list[DomainCharge] = []
    per_pod = {pod_set.name: pod_set.tas_per_pod for pod_set in pod_sets}
    for flavor in sorted(by_flavor):
        tree = cache.tree(flavor)
        info = cache.flavor(flavor)
        if tree is None or info is None:
            return Unplaced(
                by_flavor[flavor][0].name,
                flavor,
                f'Flavor "{flavor}" information missing in TAS cache',
            )
        assumed = (
            leaf_usage(charge for charge in taken if charge.by_hostname)
            if tree.by_hostname
            else None
        )
        free = cache.free(flavor, without=gone, empty=empty, assumed=assumed)
        found = place_pod_sets(tree, info.topology, free, by_flavor[flavor])
        if isinstance(found, tuple):
            return Unplaced(found[0], flavor, found[1])
        for name, placed in found.items():
            placements[name] = (flavor, placed)
            taken += placement_charges(flavor, placed, per_pod[name])
    return placements


def apply_topology(
    assignment: Assignment,
    *,
    cq: ClusterQueueInfo,
    pod_sets: Sequence[PodSetInfo],
    flavors: Mapping[str, ResourceFlavorSpec],
    cache: TopologyCache,
    delayed: bool,
) -> None:
    """Kueue's topology step after flavor assignment (module docstring); changes ``assignment``."""
    wanted = _wanted(cq, pod_sets, assignment, flavors)
    if not wanted or assignment.mode == Mode.NO_FIT:
        return
    if delayed:
        for item in wanted:
            item.result.topology_delayed = True
        return
    results = {result.name: result for result in assignment.pod_sets}
    if assignment.mode == Mode.FIT:
        found = place_workload(cq, pod_sets, assignment, flavors, cache)
        if not isinstance(found, Unplaced):
            _attach(results, found)
            return
        result = results[found.pod_set]
        result.reasons.append(_unplaced(found, with_preemption=True))
        result.mode = Mode.PREEMPT
        assignment.mode = Mode.PREEMPT
    empty = place_workload(cq, pod_sets, assignment, flavors, cache, empty=True)
    if isinstance(empty, Unplaced):
        result = results[empty.pod_set]
        result.reasons = [
            reason for reason in result.reasons if not isinstance(reason, TopologyUnplaced)
        ]
        result.reasons.append(_unplaced(empty, with_preemption=False))
        result.mode = Mode.NO_FIT
        result.no_fit_reason = PLACEMENT_FAILED
        assignment.mode = Mode.NO_FIT
        return
    for item in wanted:
        result = item.result
        result.mode = min(result.mode, Mode.PREEMPT)
        result.preempt_frs.update((flavor, resource) for resource, flavor in result.flavors.items())
    assignment.mode = min(assignment.mode, Mode.PREEMPT)


def _unplaced(failure: Unplaced, *, with_preemption: bool) -> TopologyUnplaced:
    """The pending reason of a placement that failed, with its numbers when it has them."""
    reason = failure.reason
    numbers = reason if isinstance(reason, PlacementFailure) else None
    return TopologyUnplaced(
        failure.pod_set,
        failure.flavor,
        str(reason),
        with_preemption,
        fits=numbers.fits if numbers is not None else None,
        needed=numbers.needed if numbers is not None else None,
        unit=numbers.unit if numbers is not None else "pod",
        level=numbers.level if numbers is not None else None,
        in_one=numbers.in_one if numbers is not None else True,
    )


def _attach(results: Mapping[str, PodSetResult], placements: Placements) -> None:
    for name, (flavor, placed) in placements.items():
        results[name].topology = placed
        results[name].topology_flavor = flavor


def reserve_placement(
    assignment: Assignment,
    *,
    cq: ClusterQueueInfo,
    pod_sets: Sequence[PodSetInfo],
    flavors: Mapping[str, ResourceFlavorSpec],
    cache: TopologyCache,
    victims: Sequence[str],
) -> list[DomainCharge]:
    """A preemptor's placement once its victims are gone (or the cluster empty, without any).

    What it holds for the rest of the cycle, so a lower-priority workload
    cannot take the domains its victims free (Kueue's reservation).
    """
    found = place_workload(
        cq, pod_sets, assignment, flavors, cache, without=victims, empty=not victims
    )
    if isinstance(found, Unplaced):
        return []
    per_pod = {pod_set.name: pod_set.tas_per_pod for pod_set in pod_sets}
    return [
        charge
        for name, (flavor, placed) in found.items()
        for charge in placement_charges(flavor, placed, per_pod[name])
    ]


def charges_of(assignment: Assignment, pod_sets: Sequence[PodSetInfo]) -> list[DomainCharge]:
    """What an admitted assignment's placements hold: pure."""
    per_pod = {pod_set.name: pod_set.tas_per_pod for pod_set in pod_sets}
    return [
        charge
        for result in assignment.pod_sets
        if result.topology is not None and result.topology_flavor is not None
        for charge in placement_charges(
            result.topology_flavor, result.topology, per_pod.get(result.name, {})
        )
    ]


def recorded_charges(
    admissions: Sequence[PodSetAdmission],
    pod_sets: Sequence[PodSetInfo],
    cache: TopologyCache,
) -> list[DomainCharge]:
    """What the placements a Workload's status records hold (a restart, a write landing): pure.

    A placement is charged to the TAS flavor among its pod set's flavors;
    with none known as such (a flavor deleted since), to its first flavor,
    so the room is counted again once the flavor is back.
    """
    per_pod = {pod_set.name: pod_set.tas_per_pod for pod_set in pod_sets}
    charges: list[DomainCharge] = []
    for admission in admissions:
        placed = admission.topology_assignment
        if placed is None or not admission.flavors:
            continue
        names = sorted(set(admission.flavors.values()))
        flavor = next((name for name in names if cache.flavor(name) is not None), names[0])
        charges += placement_charges(flavor, placed, per_pod.get(admission.name, {}))
    return charges


def still_fits(cache: TopologyCache, charges: Sequence[DomainCharge]) -> bool:
    """Whether every placed domain still has room for its pods (after earlier admissions)."""
    frees: dict[str, Mapping[str, Mapping[str, int]]] = {}
    for charge in charges:
        if charge.flavor not in frees:
            frees[charge.flavor] = cache.free(charge.flavor)
        left = frees[charge.flavor].get(charge.leaf)
        per_pod = {**charge.per_pod, "pods": charge.per_pod.get("pods", 0) + 1}
        if left is None or count_in(per_pod, left)[0] < charge.count:
            return False
    return True


__all__ = [
    "PLACEMENT_FAILED",
    "Placements",
    "Unplaced",
    "apply_topology",
    "charges_of",
    "needs_placement",
    "place_workload",
    "recorded_charges",
    "reserve_placement",
    "still_fits",
]
