"""Which gated pods of a Workload placed by topology go to which domain (pure).

See docs/concepts.md#topology-aware-scheduling.  A pod set placed by
topology starts its pods gated (``kueue.x-k8s.io/topology``).  For every
pod set of an admitted Workload with a topology assignment, its pods (label
``kueue.x-k8s.io/podset``, annotation ``kueue.x-k8s.io/workload``) are
matched to the assignment's domains as Kueue matches them:

- by rank, when the pod set numbers its pods (``podIndexLabel``: a Job's
  completion index; with ``subGroupIndexLabel``/``subGroupCount``, a JobSet's
  job index times the pods per job): the n-th pod goes to the domain that
  holds the n-th place of the assignment, so neighbouring ranks are
  neighbours on the network; a leader pod set comes before its workers;
- otherwise greedily: each domain takes gated pods until it holds its count,
  counting the pods already there.

Each gated pod then gets its domain's level labels as node selector and
loses the gate, so kube-scheduler binds it inside the domain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.api import objects
from scheduler.api.refs import POD_SET_LABEL
from scheduler.api.topology_assignment import TopologyAssignment
from scheduler.jobs.pod_template import has_gate, without_gate
from scheduler.jobs.topology import POD_INDEX_OFFSET, TOPOLOGY_GATE

RawObject = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Ungate:
    """Lift the topology gate of ``pod`` and steer it with ``node_selector``."""

    pod: RawObject
    node_selector: Mapping[str, str]


def gated(pod: RawObject) -> bool:
    """Whether the pod still waits for its topology domain: pure."""
    return has_gate(pod, TOPOLOGY_GATE)


def ungated_copy(pod: RawObject, node_selector: Mapping[str, str]) -> dict[str, Any]:
    """The pod without the topology gate, its node selector extended: pure."""
    result = without_gate(pod, TOPOLOGY_GATE)
    spec = result["spec"]
    spec["nodeSelector"] = {**dict(spec.get("nodeSelector") or {}), **node_selector}
    return result


def _domain_id(values: Sequence[str]) -> str:
    return ",".join(values)


def _ranks(assignment: TopologyAssignment) -> list[str]:
    """Domain id per place of the assignment, in order: pure."""
    ranks: list[str] = []
    for domain in assignment.domains:
        ranks += [_domain_id(domain.values)] * domain.count
    return ranks


def _index(pod: RawObject, label: str, bound: int) -> int | None:
    value = objects.label(pod, label)
    if value is None or not value.isdigit():
        return None
    index = int(value)
    return index if index < bound else None


def _by_rank(
    pods: Sequence[RawObject],
    request: Mapping[str, Any],
    count: int,
    offset: int,
    max_rank: int,
) -> dict[int, RawObject] | None:
    """Pods by rank (Kueue's readRanksForLabels); None when ranks cannot be used: pure."""
    label = request.get("podIndexLabel")
    if not isinstance(label, str):
        return None
    group_label = request.get("subGroupIndexLabel")
    per_group = count
    if isinstance(group_label, str):
        groups = request.get("subGroupCount")
        if not isinstance(groups, int) or groups <= 0:
            return None
        per_group = count // groups
    ranks: dict[int, RawObject] = {}
    for pod in pods:
        index = _index(pod, label, max_rank)
        if index is None:
            return None
        rank = index - offset
        if isinstance(group_label, str):
            group = _index(pod, group_label, int(request["subGroupCount"]))
            if group is None or index >= per_group:
                return None
            rank = index + group * per_group - offset
        if rank >= count or rank < 0 or rank in ranks:
            return None
        ranks[rank] = pod
    return ranks


def _selector_domain(pod: RawObject, levels: Sequence[str]) -> str:
    selector = objects.spec(pod).get("nodeSelector") or {}
    return _domain_id([str(selector.get(level, "")) for level in levels])


def _assign(
    pods: Sequence[RawObject],
    assignment: TopologyAssignment,
    request: Mapping[str, Any] | None,
    count: int,
    offset: int,
    max_rank: int,
) -> list[tuple[RawObject, str]]:
    """(gated pod, domain id) for the pods to ungate now: pure."""
    places = _ranks(assignment)
    ranked = _by_rank(pods, request, count, offset, max_rank) if request else None
    if ranked is not None and all(rank < len(places) for rank in ranked):
        consistent = all(
            gated(pod) or _selector_domain(pod, assignment.levels) == places[rank]
            for rank, pod in ranked.items()
        )
        if consistent:
            return [(pod, places[rank]) for rank, pod in sorted(ranked.items()) if gated(pod)]
    waiting = [pod for pod in pods if gated(pod)]
    there: dict[str, int] = {}
    for pod in pods:
        if not gated(pod):
            domain = _selector_domain(pod, assignment.levels)
            there[domain] = there.get(domain, 0) + 1
    chosen: list[tuple[RawObject, str]] = []
    for place in assignment.domains:
        key = _domain_id(place.values)
        room = max(place.count - there.get(key, 0), 0)
        take = min(room, len(waiting) - len(chosen))
        chosen += [(pod, key) for pod in waiting[len(chosen) : len(chosen) + take]]
    return chosen


def _offset(pods: Sequence[RawObject]) -> int:
    if not pods:
        return 0
    value = objects.annotation(pods[0], POD_INDEX_OFFSET)
    return int(value) if value is not None and value.lstrip("-").isdigit() else 0


def pods_to_ungate(workload: RawObject, pods: Iterable[RawObject]) -> list[Ungate]:
    """Every gated pod of an admitted ``workload`` that now has its domain (module docstring).

    ``pods``: the Workload's pods (any state); finished ones are left out.
    Nothing while the Workload is not admitted, or while it has unhealthy
    nodes awaiting replacement for pods meant to go there.  Pure.
    """
    if not objects.is_admitted(workload) or objects.is_finished(workload):
        return []
    admission = objects.status(workload).get("admission")
    if not isinstance(admission, Mapping):
        return []
    spec_pod_sets = {
        str(pod_set.get("name", "main")): pod_set
        for pod_set in objects.spec(workload).get("podSets") or []
        if isinstance(pod_set, Mapping)
    }
    assignments = [a for a in admission.get("podSetAssignments") or [] if isinstance(a, Mapping)]
    offsets, max_ranks = _group_ranks(assignments, spec_pod_sets)
    live = [pod for pod in pods if objects.status(pod).get("phase") not in ("Succeeded", "Failed")]
    unhealthy = {
        str(node.get("name"))
        for node in objects.status(workload).get("unhealthyNodes") or []
        if isinstance(node, Mapping)
    }
    result: list[Ungate] = []
    for item in assignments:
        raw = item.get("topologyAssignment")
        if not isinstance(raw, Mapping):
            continue
        try:
            assignment = TopologyAssignment.decoded(raw)
        except (ValueError, TypeError, AttributeError):
            continue
        name = str(item.get("name", "main"))
        members = [pod for pod in live if objects.label(pod, POD_SET_LABEL) == name]
        offset = _offset(members)
        request = spec_pod_sets.get(name, {}).get("topologyRequest")
        recorded = item.get("count")
        count = recorded if isinstance(recorded, int) else len(_ranks(assignment))
        values = {_domain_id(d.values): d.values for d in assignment.domains}
        for pod, domain in _assign(
            members,
            assignment,
            request if isinstance(request, Mapping) else None,
            count,
            offsets.get(name, 0) + offset,
            max_ranks.get(name, count) + offset,
        ):
            if values[domain] and values[domain][-1] in unhealthy:
                continue
            result.append(Ungate(pod, dict(zip(assignment.levels, values[domain], strict=True))))
    return result


def _group_ranks(
    assignments: Sequence[Mapping[str, Any]], pod_sets: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, int], dict[str, int]]:
    """Rank offset and bound per pod set: a leader's ranks come before its workers': pure."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for index, item in enumerate(assignments):
        name = str(item.get("name", "main"))
        request = pod_sets.get(name, {}).get("topologyRequest")
        group = request.get("podSetGroupName") if isinstance(request, Mapping) else None
        groups.setdefault(str(group) if group else str(index), []).append(item)
    offsets: dict[str, int] = {}
    bounds: dict[str, int] = {}
    for members in groups.values():
        counts = [(str(m.get("name", "main")), int(m.get("count") or 0)) for m in members]
        if len(counts) > 1:
            first, second = counts[0], counts[1]
            smaller, larger = (second, first) if first[1] > second[1] else (first, second)
            offsets[smaller[0]], bounds[smaller[0]] = 0, smaller[1]
            offsets[larger[0]], bounds[larger[0]] = smaller[1], larger[1] + smaller[1]
        else:
            offsets[counts[0][0]], bounds[counts[0][0]] = 0, counts[0][1]
    return offsets, bounds


__all__ = ["Ungate", "gated", "pods_to_ungate", "ungated_copy"]
