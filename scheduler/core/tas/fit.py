"""The counting and choosing steps of Kueue's placement algorithm, over one tree (pure).

See docs/concepts.md#topology-aware-scheduling; ``placement`` runs these steps
in order, following the algorithm of Kueue v0.19 so that a workload placed by
kuota lands in the same domains Kueue would choose:

1. *Counts*: every leaf (a node, or the lowest-level domain) says how many
   pods of the pod set fit in what is left of it, and how many once a
   leader pod is placed there first; every parent sums its children.  At the
   slice level (``podset-slice-required-topology``, else the lowest level)
   the pod counts become slice counts, which parents sum.
2. *Fit level*: starting at the requested level, the domains are sorted
   (most slices first for a required or preferred request, "BestFit"; fewest
   first for an unconstrained one, "LeastFreeCapacity") and the smallest
   single domain that holds every slice is chosen.  A required request fails
   there; a preferred one moves up a level; at the top (or for an
   unconstrained request) the pods are spread greedily over several domains.
3. *Descent*: level by level, the pods of each chosen domain are handed to
   its children in the same order, the last child being the best fit.

Counts live in a ``Placer``'s own state; nothing in the tree is changed.  A
failure is the message Kueue writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from scheduler.api.models import NodeSelectorTerm, Taint, Toleration
from scheduler.core.node_matching import first_untolerated_taint, requirement_matches
from scheduler.core.tas.request import SliceLayer, TopologyRequest
from scheduler.core.tas.tree import Domain, NodeInfo, TopologyTree

MAX_COUNT = 2**31 - 1
Usage = Mapping[str, Mapping[str, int]]
"""Leaf id -> resource -> integer amount."""


@dataclass(frozen=True, slots=True)
class PodSetPlacementRequest:
    """One pod set to place: its pods, what each asks for, and where it may go."""

    name: str
    count: int
    per_pod: Mapping[str, int]
    """Per-pod requests (integers), without the pod itself."""
    request: TopologyRequest | None
    implied: bool = False
    """Placed at the lowest level without asking: the ClusterQueue has only TAS flavors."""
    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    affinity: tuple[NodeSelectorTerm, ...] | None = None


class PlacementFailure(str):
    """Why pods do not fit, in Kueue's words, with the numbers behind them.

    The text is the message (a ``str``); ``fits`` of ``needed`` pods or
    slices (``unit``) fit in the best domain of ``level`` (all None when the
    failure is not about room: a level the topology lacks, say).
    """

    fits: int | None
    needed: int | None
    unit: str
    level: str | None
    in_one: bool
    """``fits`` counts one domain of ``level`` (False: every domain of the topology)."""

    def __new__(
        cls,
        text: str,
        *,
        fits: int | None = None,
        needed: int | None = None,
        unit: str = "pod",
        level: str | None = None,
        in_one: bool = True,
    ) -> PlacementFailure:
        made = super().__new__(cls, text)
        made.fits, made.needed, made.unit, made.level = fits, needed, unit, level
        made.in_one = in_one
        return made


def taint_text(taint: Taint) -> str:
    """Kubernetes' ``Taint.ToString``: ``key=value:effect``: pure."""
    if not taint.effect:
        return taint.key if not taint.value else f"{taint.key}={taint.value}:"
    return (
        f"{taint.key}:{taint.effect}"
        if not taint.value
        else (f"{taint.key}={taint.value}:{taint.effect}")
    )


@dataclass(slots=True)
class Exclusions:
    """Why leaves were left out, for the message of a placement that fails."""

    total_nodes: int = 0
    node_selector: int = 0
    affinity: int = 0
    topology_domain: int = 0
    taints: dict[str, int] = field(default_factory=dict)
    resources: dict[str, int] = field(default_factory=dict)

    def any(self) -> bool:
        return bool(
            self.node_selector
            or self.affinity
            or self.taints
            or self.topology_domain
            or self.resources
        )

    def text(self) -> str:
        reasons = []
        if self.node_selector:
            reasons.append(f"nodeSelector: {self.node_selector}")
        if self.affinity:
            reasons.append(f"affinity: {self.affinity}")
        if self.topology_domain:
            reasons.append(f"topologyDomain: {self.topology_domain}")
        reasons += [f'taint "{key}": {count}' for key, count in sorted(self.taints.items())]
        reasons += [f'resource "{key}": {count}' for key, count in sorted(self.resources.items())]
        return ", ".join(sorted(reasons))


def count_in(requests: Mapping[str, int], capacity: Mapping[str, int]) -> tuple[int, str]:
    """How many times ``requests`` fit in ``capacity``, and the resource that limits it: pure.

    Ties go to the alphabetically first resource; a zero request never limits.
    """
    return _count_sorted(tuple(sorted(requests.items())), capacity)


def _count_sorted(
    requests: tuple[tuple[str, int], ...], capacity: Mapping[str, int]
) -> tuple[int, str]:
    """:func:`count_in` for requests already sorted by resource (the per-node hot path)."""
    best: int | None = None
    limiting = ""
    for resource, amount in requests:
        if amount == 0:
            count = MAX_COUNT
        else:
            count = max(0, min(capacity.get(resource, 0) // amount, MAX_COUNT))
        if best is None or count < best:
            best, limiting = count, resource
    return (best or 0), limiting


def _node_matches(
    node: NodeInfo, selector: Mapping[str, str], affinity: tuple[NodeSelectorTerm, ...] | None
) -> tuple[bool, bool]:
    """(selector matches, required affinity matches) for one node: pure."""
    if any(node.labels.get(key) != value for key, value in selector.items()):
        return False, True
    if not affinity:
        return True, True
    for term in affinity:
        if not term.match_expressions and not term.match_fields:
            continue
        if all(requirement_matches(expr, node.labels) for expr in term.match_expressions) and all(
            requirement_matches(expr, {"metadata.name": node.name}) for expr in term.match_fields
        ):
            return True, True
    return True, False


class _State:
    """Per-domain counts of one placement run (indexed by ``Domain.index``)."""

    __slots__ = ("pods", "slices", "pods_wl", "slices_wl", "leaders")

    def __init__(self, size: int) -> None:
        self.pods = [0] * size
        self.slices = [0] * size
        self.pods_wl = [0] * size
        """Pods that fit once a leader is placed in the domain too."""
        self.slices_wl = [0] * size
        self.leaders = [0] * size


@dataclass(slots=True)
class Params:
    count: int
    leader_count: int
    slice_size: int
    requested_level: int
    slice_level: int
    required: bool
    unconstrained: bool
    size_at_level: dict[int, int]
    layers: tuple[SliceLayer, ...]


class Placer:
    """One run of the algorithm over one flavor's tree (module docstring)."""

    def __init__(self, tree: TopologyTree, topology: str) -> None:
        self.tree = tree
        self.topology = topology
        self.state = _State(tree.size)
        self.stats = Exclusions()

    # --- ordering ----------------------------------------------------------------------

    def sorted_domains(self, domains: Sequence[Domain], unconstrained: bool) -> list[Domain]:
        state = self.state
        sign = 1 if unconstrained else -1
        return sorted(
            domains,
            key=lambda d: (sign * state.slices[d.index], state.pods[d.index], d.values),
        )

    def _sorted_with_leader(self, domains: Sequence[Domain], unconstrained: bool) -> list[Domain]:
        state = self.state
        sign = 1 if unconstrained else -1
        return sorted(
            domains,
            key=lambda d: (
                -state.leaders[d.index],
                sign * state.slices_wl[d.index],
                state.pods_wl[d.index],
                d.values,
            ),
        )

    def _best_fit_by(
        self,
        domains: Sequence[Domain],
        needed: int,
        count_of: Callable[[Domain], int],
        leader_count: int,
    ) -> Domain:
        best, best_count = domains[0], MAX_COUNT + 1
        for domain in domains:
            if self.state.leaders[domain.index] < leader_count:
                continue
            count = count_of(domain)
            if needed <= count < best_count:
                best, best_count = domain, count
        return best

    def _best_fit(self, domains: Sequence[Domain], count: int, leader_count: int) -> Domain:
        values = self.state.pods_wl if leader_count > 0 else self.state.pods
        return self._best_fit_by(domains, count, lambda d: values[d.index], leader_count)

    def _best_fit_slices(self, domains: Sequence[Domain], count: int, leader_count: int) -> Domain:
        values = self.state.slices_wl if leader_count > 0 else self.state.slices
        return self._best_fit_by(domains, count, lambda d: values[d.index], leader_count)

    # --- phase 1: counts ---------------------------------------------------------------

    def fill_counts(
        self,
        free: Usage,
        requests: Mapping[str, int],
        leader_requests: Mapping[str, int] | None,
        workers: PodSetPlacementRequest,
        params: Params,
    ) -> None:
        state, stats = self.state, self.stats
        ordered = tuple(sorted(requests.items()))
        leader_ordered = (
            tuple(sorted(leader_requests.items())) if leader_requests is not None else None
        )
        for leaf_id, leaf in self.tree.leaves.items():
            stats.total_nodes += 1
            node = leaf.node
            if node is not None:
                taint = first_untolerated_taint(node.taints, workers.tolerations)
                if taint is not None:
                    key = taint_text(taint)
                    stats.taints[key] = stats.taints.get(key, 0) + 1
                    continue
                selector_ok, affinity_ok = _node_matches(
                    node, workers.node_selector, workers.affinity
                )
                if not selector_ok:
                    stats.node_selector += 1
                    continue
                if not affinity_ok:
                    stats.affinity += 1
                    continue
            left = free.get(leaf_id, {})
            index = leaf.index
            pods, limiting = _count_sorted(ordered, left)
            state.pods[index] = pods
            if pods == 0 and limiting:
                stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
            state.leaders[index] = 0
            state.pods_wl[index] = pods
            if leader_ordered is not None and _count_sorted(leader_ordered, left)[0] > 0:
                state.leaders[index] = 1
                remaining = dict(left)
                for resource, amount in leader_ordered:
                    remaining[resource] = remaining.get(resource, 0) - amount
                state.pods_wl[index] = _count_sorted(ordered, remaining)[0]
        for root in self.tree.roots:
            self._fill_parent(root, params, 0)

    def _fill_parent(self, domain: Domain, params: Params, level: int) -> None:
        state, index = self.state, domain.index
        slice_size, slice_level = params.slice_size, params.slice_level
        if not domain.children:
            if level == slice_level:
                state.slices[index] = state.pods[index] // slice_size
                state.slices_wl[index] = state.pods_wl[index] // slice_size
            return
        pods = slices = leaders = 0
        contributes = False
        pod_gap = slice_gap = MAX_COUNT
        inner = params.size_at_level.get(level + 1)
        leader_required = params.leader_count > 0
        for child in domain.children:
            self._fill_parent(child, params, level + 1)
            c = child.index
            child_pods, child_pods_wl = state.pods[c], state.pods_wl[c]
            if inner:
                child_pods = child_pods // inner * inner
                child_pods_wl = child_pods_wl // inner * inner
            pods += child_pods
            slices += state.slices[c]
            if not leader_required or state.leaders[c] > 0:
                contributes = True
                pod_gap = min(child_pods - child_pods_wl, pod_gap)
                slice_gap = min(state.slices[c] - state.slices_wl[c], slice_gap)
            leaders = max(state.leaders[c], leaders)
        state.pods[index] = pods
        slices_wl = 0
        if contributes:
            state.pods_wl[index] = pods - pod_gap
            slices_wl = slices - slice_gap
        else:
            state.pods_wl[index] = 0
        state.leaders[index] = leaders
        if level == slice_level:
            slices = state.pods[index] // slice_size
            slices_wl = state.pods_wl[index] // slice_size
        state.slices[index] = slices
        state.slices_wl[index] = slices_wl

    # --- failure messages --------------------------------------------------------------

    def not_fit(self, fit: int, total: int, slice_size: int) -> str:
        unit = "pod" if slice_size == 1 else "slice"
        if fit == 0:
            text = f'topology "{self.topology}" doesn\'t allow to fit any of {total} {unit}(s)'
        else:
            text = f'topology "{self.topology}" allows to fit only {fit} out of {total} {unit}(s)'
        return text + self._exclusions()

    def _exclusions(self) -> str:
        if not self.stats.any():
            return ""
        return f". Total nodes: {self.stats.total_nodes}; excluded: {self.stats.text()}"

    def multi_layer_not_fit(self, level: int, count: int, layers: Sequence[SliceLayer]) -> str:
        text = f'topology "{self.topology}" doesn\'t allow to fit'
        slices = self.state.slices
        domains = list(self.tree.per_level[level].values())
        if not domains:
            return text
        best = min(domains, key=lambda d: (-slices[d.index], d.id))
        for layer in layers:
            target = self.tree.level_index(layer.level)
            if target is None:
                continue
            fit = self._slices_below(best, level, target, layer.size)
            text += f"; {fit}/{count // layer.size} slice(s) fit on level {layer.level}"
        return text + self._exclusions()

    def _slices_below(self, domain: Domain, level: int, target: int, size: int) -> int:
        if level == target:
            return self.state.pods[domain.index] // size
        return sum(self._slices_below(child, level + 1, target, size) for child in domain.children)

    # --- phase 2a: the level that fits -------------------------------------------------

    def fit_level(self, search: int, p: Params) -> tuple[int, list[Domain]] | str:
        state = self.state
        domains = list(self.tree.per_level[search].values())
        if not domains:
            return f"no topology domains at level: {self.tree.levels[search]}"
        ordered = self._sorted_with_leader(domains, p.unconstrained)
        top = ordered[0]
        slice_count = p.count // p.slice_size
        best_fit = not p.unconstrained

        def failure(fit: int, total: int, in_one: bool = True) -> str:
            if p.layers and p.size_at_level:
                return self.multi_layer_not_fit(search, p.count, p.layers)
            return PlacementFailure(
                self.not_fit(fit, total, p.slice_size),
                fits=fit,
                needed=total,
                unit="pod" if p.slice_size == 1 else "slice",
                level=self.tree.levels[search],
                in_one=in_one,
            )

        if (
            best_fit
            and state.slices_wl[top.index] >= slice_count
            and state.leaders[top.index] >= p.leader_count
        ):
            top = self._best_fit_slices(ordered, slice_count, p.leader_count)
        if not best_fit:
            for candidate in ordered:
                capacity = state.slices[candidate.index]
                if p.leader_count > 0:
                    if state.leaders[candidate.index] < p.leader_count:
                        continue
                    capacity = state.slices_wl[candidate.index]
                if capacity >= slice_count:
                    return search, [candidate]
            if p.required:
                return failure(state.pods[ordered[-1].index], slice_count)
        if state.slices_wl[top.index] >= slice_count and state.leaders[top.index] >= p.leader_count:
            return search, [top]
        if p.required:
            return failure(state.slices[top.index], slice_count)
        if search > 0 and not p.unconstrained:
            return self.fit_level(search - 1, p)
        return self._spread(search, ordered, p, slice_count, failure)

    def _spread(
        self,
        search: int,
        ordered: list[Domain],
        p: Params,
        slice_count: int,
        failure: Callable[[int, int, bool], str],
    ) -> tuple[int, list[Domain]] | str:
        """Several domains of the top level (or of an unconstrained request), greedily."""
        state = self.state
        best_fit = not p.unconstrained
        chosen: list[Domain] = []
        remaining, leaders_left = slice_count, p.leader_count
        ordered = self._leader_first(ordered, p.count, p.leader_count, p.slice_size, True)
        index = 0
        while leaders_left > 0 and index < len(ordered) and state.leaders[ordered[index].index] > 0:
            domain = ordered[index]
            if best_fit and state.slices_wl[domain.index] >= remaining:
                domain = self._best_fit_slices(ordered[index:], remaining, leaders_left)
            chosen.append(domain)
            leaders_left -= state.leaders[domain.index]
            remaining -= state.slices_wl[domain.index]
            index += 1
        if leaders_left > 0:
            return failure(p.leader_count - leaders_left, slice_count, False)
        rest = self.sorted_domains(ordered[index:], p.unconstrained)
        for position, domain in enumerate(rest):
            if remaining <= 0:
                break
            if best_fit and state.slices[domain.index] >= remaining:
                domain = self._best_fit_slices(rest[position:], remaining, 0)
            chosen.append(domain)
            remaining -= state.slices[domain.index]
        if remaining > 0:
            return failure(slice_count - remaining, slice_count, False)
        return search, chosen

    # --- phase 2b: handing pods down ---------------------------------------------------

    def _leader_first(
        self, domains: list[Domain], count: int, leader_count: int, slice_size: int, slices: bool
    ) -> list[Domain]:
        """A leader-capable domain whose leader still leaves room for every worker, first."""
        if leader_count == 0 or len(domains) < 2:
            return domains
        state = self.state
        needed = count // slice_size if slices else count
        counts = state.slices if slices else state.pods
        with_leader = state.slices_wl if slices else state.pods_wl
        available = sum(counts[d.index] for d in domains)
        for position, domain in enumerate(domains):
            if state.leaders[domain.index] < leader_count:
                continue
            penalty = counts[domain.index] - with_leader[domain.index]
            if available - penalty < needed:
                continue
            if position == 0:
                return domains
            return [domain, *domains[:position], *domains[position + 1 :]]
        return domains

    def hand_down(
        self,
        domains: list[Domain],
        count: int,
        leader_count: int,
        slice_size: int,
        unconstrained: bool,
        slices: bool,
    ) -> list[Domain]:
        """Give ``count`` pods to ``domains`` in order; the domains that got some: pure."""
        state = self.state
        domains = self._leader_first(domains, count, leader_count, slice_size, slices)
        best_fit = not unconstrained
        primary = state.slices if slices else state.pods
        with_leader = state.slices_wl if slices else state.pods_wl
        unit = slice_size if slices else 1
        remaining = count // slice_size if slices else count
        leaders_left = leader_count
        chosen: list[Domain] = []
        for position, domain in enumerate(domains):
            if leaders_left > 0:
                if (
                    best_fit
                    and with_leader[domain.index] >= remaining
                    and state.leaders[domain.index] >= leaders_left
                ):
                    domain = (
                        self._best_fit_slices(domains[position:], remaining, leaders_left)
                        if slices
                        else self._best_fit(domains[position:], remaining, leaders_left)
                    )
                i = domain.index
                chosen.append(domain)
                if with_leader[i] >= remaining and state.leaders[i] >= leaders_left:
                    primary[i] = remaining
                    state.leaders[i] = leaders_left
                    state.pods[i] = remaining * unit
                    return chosen
                with_leader[i] = min(with_leader[i], remaining)
                state.leaders[i] = min(state.leaders[i], leaders_left)
                primary[i] = with_leader[i]
                state.pods[i] = with_leader[i] * unit
                leaders_left -= state.leaders[i]
                remaining -= with_leader[i]
                continue
            if best_fit and primary[domain.index] >= remaining:
                domain = (
                    self._best_fit_slices(domains[position:], remaining, 0)
                    if slices
                    else self._best_fit(domains[position:], remaining, 0)
                )
            i = domain.index
            state.leaders[i] = 0
            chosen.append(domain)
            if primary[i] >= remaining:
                primary[i] = remaining
                state.pods[i] = remaining * unit
                return chosen
            state.pods[i] = primary[i] * unit
            remaining -= primary[i]
        return []


__all__ = [
    "MAX_COUNT",
    "Exclusions",
    "Params",
    "Placer",
    "PlacementFailure",
    "PodSetPlacementRequest",
    "Usage",
    "count_in",
    "taint_text",
]
