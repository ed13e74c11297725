"""Flavor assignment: which flavor each pod set gets, and how well it fits.

See docs/scheduling.md#flavor-assignment.

Results, not booleans: every (pod set, resource group) records the flavor
chosen, its mode (``NoFit < PreemptNoCandidates < Preempt < Reclaim < Fit``,
an ordered enum, so a pod set's mode is ``min()`` over its groups and a
workload's ``min()`` over its pod sets), its borrowing level, and the
reasons (``scheduler.core.pending_reasons``: shortages and blockers) and
NoFit reasons of every flavor examined.  The pending message a user reads is
rendered from that structure (docs/scheduling.md#pending-reasons), never the
other way round.

Assignment reads the live quota tree; the caller decides what to do with the
result (the cycle).  When an FR lacks unused quota and preemption may help
(docs/scheduling.md#quota-classification), ``simulate(fr, amount)`` (the
preemption simulation of ``scheduler.core.preemption``) says which workloads
would be evicted and the borrowing level once they are gone.

The flavor-scan position (docs/scheduling.md#flavor-scan-position): every (pod
set, resource group) records the index of the last flavor examined, or -1 when
the scan reached the end; the next attempt may resume after it
(``start_after``).  A recomputation after overlapping preemptions pins each
group to the flavor chosen at nomination (``pinned``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from scheduler.api.models import ResourceFlavorSpec
from scheduler.api.topology_assignment import TopologyAssignment
from scheduler.core.cluster_queue import ClusterQueueInfo
from scheduler.core.node_matching import first_untolerated_taint, matches_flavor_labels
from scheduler.core.pending_reasons import (
    AffinityMismatch,
    Details,
    ExceedsMaximum,
    FlavorNotFound,
    PodSetReason,
    PreemptionPossibility,
    ResourceUnavailable,
    Shortage,
    TopologyMismatch,
    UntoleratedTaint,
    pod_set_message,
    render,
)
from scheduler.core.resource_node import (
    QuotaNode,
    borrowing_level,
    capacity_available,
    may_reclaim_in_hierarchy,
    potential,
)
from scheduler.core.resources import FlavorResource, FRValues, to_quantity
from scheduler.core.tas.placement import has_levels
from scheduler.core.workload import PodSetInfo


class Mode(IntEnum):
    """How a flavor (or a pod set, or a workload) fits; larger is better."""

    NO_FIT = 0
    PREEMPT_NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4


REASON_SEVERITY: Mapping[str, int] = {
    "NoMatchingFlavor": 4,
    "ExceedsMaxQuota": 3,
    "WaitingForQuota": 2,
    "TopologyPlacementFailed": 1,
}
"""NoFit reasons, most severe first (docs/scheduling.md#pending-reasons)."""


@dataclass(slots=True)
class PodSetResult:
    name: str
    count: int
    mode: Mode = Mode.FIT
    borrowing_level: int = 0
    flavors: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    reasons: list[PodSetReason] = field(default_factory=list)
    """Why examined flavors could not be used (none for a group whose chosen flavor fits)."""
    no_fit_reason: str | None = None
    preempt_frs: set[FlavorResource] = field(default_factory=set)
    """Assigned FRs whose mode is not Fit (they need preemption)."""
    topology: TopologyAssignment | None = None
    """Where its pods go, once placed (docs/concepts.md#topology-aware-scheduling)."""
    topology_flavor: str | None = None
    """The TAS flavor of ``topology``."""
    topology_delayed: bool = False
    """TAS requested, placed later by a MultiKueue worker (``delayedTopologyRequest``)."""

    def message(self) -> str:
        """``couldn't assign flavors to pod set <name>: <sorted notes>``: pure."""
        return pod_set_message(self.name, self.reasons)


@dataclass(slots=True)
class Assignment:
    """The outcome of flavor assignment for one workload in one CQ."""

    pod_sets: list[PodSetResult]
    mode: Mode
    borrowing_level: int
    usage: FRValues
    """Total per FR over all assigned pod sets."""
    last_tried: dict[tuple[str, int], int] = field(default_factory=dict)
    """Flavor-scan position per (pod set, resource group)."""
    chosen: dict[tuple[str, int], str] = field(default_factory=dict)
    """The flavor chosen per (pod set, resource group)."""

    @property
    def preempt_frs(self) -> set[FlavorResource]:
        """FRs needing preemption over all pod sets: pure."""
        return set().union(*(result.preempt_frs for result in self.pod_sets))

    def message(self) -> str:
        """The pending message: each pod set that is not a plain Fit, joined by "; ": pure."""
        return self.pending()[0]

    def pending(self) -> tuple[str, Details]:
        """The pending message and the shortages and blockers it names, in its order: pure."""
        parts = [
            render(result.name, result.reasons)
            for result in self.pod_sets
            if result.mode != Mode.FIT
        ]
        if len(parts) == 1:
            return parts[0]
        message = "; ".join(message for message, _ in parts)
        shortages = tuple(item for _, (some, _) in parts for item in some)
        blockers = tuple(item for _, (_, some) in parts for item in some)
        return message, (shortages, blockers)

    def no_fit_reason(self) -> str:
        """The most severe NoFit reason over the pod sets: pure."""
        reasons = [result.no_fit_reason for result in self.pod_sets if result.no_fit_reason]
        return max(reasons, key=REASON_SEVERITY.__getitem__) if reasons else "NoMatchingFlavor"


@dataclass(slots=True)
class _Candidate:
    flavor: str
    mode: Mode
    level: int
    preempt_frs: list[FlavorResource] = field(default_factory=list)


Simulation = Callable[[FlavorResource, int], tuple[tuple[object, ...], int]]
"""``simulate(fr, amount) -> (targets, borrowing level without them)``."""

ScanKey = tuple[str, int]
"""(pod set name, resource group index)."""


@dataclass(slots=True)
class _Scan:
    start_after: Mapping[ScanKey, int]
    pinned: Mapping[ScanKey, str] | None
    last_tried: dict[ScanKey, int] = field(default_factory=dict)
    chosen: dict[ScanKey, str] = field(default_factory=dict)


def assign_flavors(
    *,
    cq: ClusterQueueInfo,
    pod_sets: tuple[PodSetInfo, ...],
    flavors: Mapping[str, ResourceFlavorSpec],
    ignore_undeclared: bool,
    fair_sharing: bool,
    simulate: Simulation | None = None,
    start_after: Mapping[ScanKey, int] | None = None,
    pinned: Mapping[ScanKey, str] | None = None,
    topology_levels: Mapping[str, tuple[str, ...] | None] | None = None,
) -> Assignment:
    """Assign a flavor to every resource group of every pod set, in spec order: pure.

    ``topology_levels``: the levels of each TAS flavor's Topology, None for
    one whose Topology is missing (docs/concepts.md#topology-aware-scheduling).
    """
    topology_levels = topology_levels or {}
    node = cq.node
    assert node is not None
    scan = _Scan(start_after=start_after or {}, pinned=pinned)
    results: list[PodSetResult] = []
    assigned: FRValues = {}
    workload_mode = Mode.FIT
    workload_level = 0
    for pod_set in pod_sets:
        result = _assign_pod_set(
            cq=cq,
            node=node,
            pod_set=pod_set,
            flavors=flavors,
            earlier=assigned,
            ignore_undeclared=ignore_undeclared,
            fair_sharing=fair_sharing,
            simulate=simulate,
            scan=scan,
            topology_levels=topology_levels,
        )
        results.append(result)
        workload_mode = min(workload_mode, result.mode)
        if result.mode == Mode.NO_FIT:
            break
        workload_level = max(workload_level, result.borrowing_level)
        for resource, flavor in result.flavors.items():
            fr = (flavor, resource)
            assigned[fr] = assigned.get(fr, 0) + result.usage[resource]
    return Assignment(
        pod_sets=results,
        mode=workload_mode,
        borrowing_level=workload_level,
        usage=assigned,
        last_tried=scan.last_tried,
        chosen=scan.chosen,
    )


def _assign_pod_set(
    *,
    cq: ClusterQueueInfo,
    node: QuotaNode,
    pod_set: PodSetInfo,
    flavors: Mapping[str, ResourceFlavorSpec],
    earlier: FRValues,
    ignore_undeclared: bool,
    fair_sharing: bool,
    simulate: Simulation | None,
    scan: _Scan,
    topology_levels: Mapping[str, tuple[str, ...] | None],
) -> PodSetResult:
    result = PodSetResult(name=pod_set.name, count=pod_set.count)
    requests = pod_set.requests
    if cq.covers_pods:
        requests = {**requests, "pods": pod_set.count}
    by_group: dict[int, list[str]] = {}
    for resource in sorted(requests):
        index = cq.group_of.get(resource)
        if index is not None:
            by_group.setdefault(index, []).append(resource)
        elif requests[resource] != 0 and not ignore_undeclared:
            result.reasons.append(ResourceUnavailable(pod_set.name, resource))
    if result.reasons:
        result.mode = Mode.NO_FIT
        result.no_fit_reason = "NoMatchingFlavor"
        return result
    group_reasons: list[str] = []
    for index in sorted(by_group):
        group = cq.groups[index]
        resources = [name for name in group.covered if name in requests]
        key = (pod_set.name, index)
        order = list(enumerate(group.flavors))
        if scan.pinned is not None and key in scan.pinned:
            order = [(i, name) for i, name in order if name == scan.pinned[key]]
        else:
            order = order[scan.start_after.get(key, -1) + 1 :]
        chosen, why, no_fit, last = _choose_flavor(
            cq=cq,
            node=node,
            order=order,
            last_index=len(group.flavors) - 1,
            resources=resources,
            pod_set=pod_set,
            requests=requests,
            flavors=flavors,
            earlier=earlier,
            fair_sharing=fair_sharing,
            simulate=simulate,
            topology_levels=topology_levels,
        )
        scan.last_tried[key] = last
        if chosen is not None:
            scan.chosen[key] = chosen.flavor
        if chosen is None:
            result.reasons.extend(why)
            result.mode = Mode.NO_FIT
            group_reasons.append(
                min(no_fit, key=REASON_SEVERITY.__getitem__) if no_fit else "NoMatchingFlavor"
            )
            continue
        if chosen.mode != Mode.FIT:
            result.reasons.extend(why)
        result.mode = min(result.mode, chosen.mode)
        result.borrowing_level = max(result.borrowing_level, chosen.level)
        result.preempt_frs.update(chosen.preempt_frs)
        for resource in resources:
            result.flavors[resource] = chosen.flavor
            result.usage[resource] = requests[resource]
    if result.mode == Mode.NO_FIT:
        result.no_fit_reason = max(group_reasons, key=REASON_SEVERITY.__getitem__)
    return result


def _choose_flavor(
    *,
    cq: ClusterQueueInfo,
    node: QuotaNode,
    order: list[tuple[int, str]],
    last_index: int,
    resources: list[str],
    pod_set: PodSetInfo,
    requests: Mapping[str, int],
    flavors: Mapping[str, ResourceFlavorSpec],
    earlier: FRValues,
    fair_sharing: bool,
    simulate: Simulation | None,
    topology_levels: Mapping[str, tuple[str, ...] | None],
) -> tuple[_Candidate | None, list[PodSetReason], list[str], int]:
    """Scan flavors in ``order`` and pick one (docs/scheduling.md#choosing-among-flavors): pure.

    Returns (choice, reasons, NoFit reasons, scan position).

    The scan position is the index of the flavor the scan stopped at, or -1
    when it went through the end of the group's list.
    """
    why: list[PodSetReason] = []
    no_fit: list[str] = []
    best: _Candidate | None = None
    fungibility = cq.fungibility
    for position, flavor in order:
        spec = flavors.get(flavor)
        if spec is None:
            why.append(FlavorNotFound(pod_set.name, flavor))
            no_fit.append("NoMatchingFlavor")
            continue
        mismatch = topology_mismatch(cq, pod_set, flavor, spec, flavors, topology_levels)
        if mismatch is not None:
            why.append(TopologyMismatch(pod_set.name, flavor, mismatch))
            no_fit.append("NoMatchingFlavor")
            continue
        taint = first_untolerated_taint(spec.node_taints, pod_set.tolerations + spec.tolerations)
        if taint is not None:
            why.append(UntoleratedTaint(pod_set.name, flavor, taint))
            no_fit.append("NoMatchingFlavor")
            continue
        if not matches_flavor_labels(pod_set.node_selector, pod_set.affinity, spec.node_labels):
            why.append(AffinityMismatch(pod_set.name, flavor))
            no_fit.append("NoMatchingFlavor")
            continue
        mode = Mode.FIT
        level = 0
        needing: list[FlavorResource] = []
        for resource in resources:
            fr = (flavor, resource)
            before = earlier.get(fr, 0)
            this_mode, this_level, note, reason = _classify(
                cq=cq,
                node=node,
                pod_set=pod_set.name,
                fr=fr,
                earlier=before,
                request=requests[resource],
                fair_sharing=fair_sharing,
                simulate=simulate,
            )
            if note is not None:
                why.append(note)
            if this_mode < Mode.FIT:
                needing.append(fr)
            mode = min(mode, this_mode)
            level = max(level, this_level)
            if this_mode == Mode.NO_FIT:
                no_fit.append(reason or "WaitingForQuota")
                break
        if mode == Mode.NO_FIT:
            continue
        candidate = _Candidate(flavor, mode, level, needing)
        try_next = (
            mode == Mode.PREEMPT_NO_CANDIDATES
            or (
                mode in (Mode.PREEMPT, Mode.RECLAIM)
                and fungibility.when_can_preempt == "TryNextFlavor"
            )
            or (level > 0 and fungibility.when_can_borrow == "TryNextFlavor")
        )
        if not try_next:
            return candidate, why, no_fit, (position if position < last_index else -1)
        if best is None or _preferred(candidate, best, fungibility.preference):
            best = candidate
    return best, why, no_fit, -1


def tas_only(cq: ClusterQueueInfo, flavors: Mapping[str, ResourceFlavorSpec]) -> bool:
    """Every flavor of the queue exists and names a Topology (TAS is then implied): pure."""
    return all(
        (spec := flavors.get(name)) is not None and bool(spec.topology_name)
        for name in cq.flavor_names
    )


def requests_topology(
    cq: ClusterQueueInfo, pod_set: PodSetInfo, flavors: Mapping[str, ResourceFlavorSpec]
) -> tuple[bool, bool]:
    """(TAS requested, only implied by a TAS-only queue) for a pod set in ``cq``: pure."""
    explicit = pod_set.topology is not None and pod_set.topology.explicit
    if explicit:
        return True, False
    implied = tas_only(cq, flavors)
    return implied, implied


def topology_mismatch(
    cq: ClusterQueueInfo,
    pod_set: PodSetInfo,
    flavor: str,
    spec: ResourceFlavorSpec,
    flavors: Mapping[str, ResourceFlavorSpec],
    topology_levels: Mapping[str, tuple[str, ...] | None],
) -> str | None:
    """Why ``flavor`` cannot serve the pod set's topology request, None when it can: pure.

    See docs/concepts.md#topology-aware-scheduling.  A pod set asking for TAS
    needs a TAS flavor with the levels it names, except for resources the TAS
    flavor does not give (a quota-only flavor may still cover those); a TAS
    flavor serves only pod sets that ask for TAS, asked or implied.
    """
    requested, implied = requests_topology(cq, pod_set, flavors)
    if requested:
        if implied:
            return None
        if not spec.topology_name:
            if not set(_group_resources(cq, flavor)).intersection(pod_set.tas_per_pod):
                return None
            return f'Flavor "{flavor}" does not support TopologyAwareScheduling'
        if flavor not in topology_levels or topology_levels[flavor] is None:
            return f'Flavor "{flavor}" information missing in TAS cache'
        if not has_levels(topology_levels[flavor] or (), pod_set.topology):
            return f'Flavor "{flavor}" does not contain the requested level'
        return None
    if spec.topology_name:
        return f'Flavor "{flavor}" supports only TopologyAwareScheduling'
    return None


def _group_resources(cq: ClusterQueueInfo, flavor: str) -> tuple[str, ...]:
    """The resources of the resource group that lists ``flavor``: pure."""
    for group in cq.groups:
        if flavor in group.flavors:
            return group.covered
    return ()


def _preferred(candidate: _Candidate, best: _Candidate, preference: str | None) -> bool:
    """Whether ``candidate`` beats ``best``; exact ties keep the earlier flavor: pure."""
    if Mode.PREEMPT_NO_CANDIDATES in (candidate.mode, best.mode):
        return candidate.mode > best.mode
    if preference == "PreemptionOverBorrowing":
        if candidate.level != best.level:
            return candidate.level < best.level
        return candidate.mode > best.mode
    if candidate.mode != best.mode:
        return candidate.mode > best.mode
    return candidate.level < best.level


def _classify(
    *,
    cq: ClusterQueueInfo,
    node: QuotaNode,
    pod_set: str,
    fr: tuple[str, str],
    earlier: int,
    request: int,
    fair_sharing: bool,
    simulate: Simulation | None,
) -> tuple[Mode, int, PodSetReason | None, str | None]:
    """Quota classification of one FR: (mode, borrowing level, reason, NoFit reason): pure."""
    flavor, resource = fr
    value = earlier + request
    maximum = potential(node, fr)
    if value > maximum:
        exceeds = ExceedsMaximum(
            pod_set=pod_set,
            flavor=flavor,
            resource=resource,
            earlier=to_quantity(resource, earlier),
            request=to_quantity(resource, request),
            maximum=to_quantity(resource, maximum),
        )
        return Mode.NO_FIT, 0, exceeds, "ExceedsMaxQuota"
    free = capacity_available(node, fr)
    if value <= free:
        return Mode.FIT, borrowing_level(node, fr, value), None, None
    missing = to_quantity(resource, value - free)
    policy = cq.preemption
    can_preempt_while_borrowing = policy.borrow_within_cohort.policy == "LowerPriority" or (
        fair_sharing and policy.reclaim_within_cohort != "Never"
    )
    if (
        node.nominal.get(fr, 0) >= value
        or may_reclaim_in_hierarchy(node, fr, value)
        or can_preempt_while_borrowing
    ):
        if simulate is None:
            level = borrowing_level(node, fr, value)
            possibility = PreemptionPossibility.NO_CANDIDATES
            mode = Mode.PREEMPT_NO_CANDIDATES
        else:
            targets, level = simulate(fr, value)
            in_cq = any(getattr(target, "cluster_queue", None) == cq.name for target in targets)
            if not targets:
                possibility, mode = PreemptionPossibility.NO_CANDIDATES, Mode.PREEMPT_NO_CANDIDATES
            elif in_cq:
                possibility, mode = PreemptionPossibility.PREEMPT, Mode.PREEMPT
            else:
                possibility, mode = PreemptionPossibility.RECLAIM, Mode.RECLAIM
        shortage = Shortage(pod_set, flavor, resource, missing, level > 0, possibility)
        return mode, level, shortage, None
    # Here the request alone exceeds the nominal quota (first condition above) and the CQ has a
    # cohort (else ``value > maximum``): the FR can only be had by borrowing.
    shortage = Shortage(
        pod_set, flavor, resource, missing, True, PreemptionPossibility.NOT_POSSIBLE
    )
    return Mode.NO_FIT, 0, shortage, "WaitingForQuota"


__all__ = [
    "Assignment",
    "Mode",
    "PodSetResult",
    "REASON_SEVERITY",
    "assign_flavors",
    "requests_topology",
    "tas_only",
    "topology_mismatch",
]
