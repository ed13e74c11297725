"""What a workload asks for, in the engine's own terms (docs/scheduling.md#workload-usage).

The engine never keeps the API object in its scheduling structures: on
``apply`` a Workload is reduced to a ``PodSetInfo`` per pod set (counted
integer requests, tolerations, node selection) and a queue key.  Counted
requests follow the docs: excluded prefixes dropped, transformations applied,
negatives floored, then multiplied by the effective count (``count -
reclaimable``).  Pod sets of identical shape are interned, so 100,000 queued
copies of one Job template share one ``PodSetInfo``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from scheduler.api.config import ResourcesConfig
from scheduler.api.models import NodeSelectorTerm, PodSet, Toleration, Workload
from scheduler.api.quantity import NANOS_PER_UNIT, Quantity
from scheduler.api.topology_assignment import TopologyAssignment
from scheduler.core.decisions import PodSetAdmission
from scheduler.core.resources import FRValues, to_int, to_ints, to_quantity
from scheduler.core.tas.request import TopologyRequest, read_topology_request

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class PodSetInfo:
    """One pod set as flavor assignment sees it (immutable by convention, shared)."""

    __slots__ = (
        "name",
        "count",
        "min_count",
        "per_pod",
        "requests",
        "tolerations",
        "node_selector",
        "affinity",
        "topology",
        "tas_per_pod",
    )

    def __init__(
        self,
        *,
        name: str,
        count: int,
        per_pod: Mapping[str, int],
        tolerations: tuple[Toleration, ...],
        node_selector: Mapping[str, str],
        affinity: tuple[NodeSelectorTerm, ...] | None,
        min_count: int | None = None,
        topology: TopologyRequest | None = None,
        tas_per_pod: Mapping[str, int] | None = None,
    ) -> None:
        self.name = name
        self.count = count
        self.min_count = count if min_count is None else max(0, min(min_count, count))
        """Fewest pods partial admission may admit (``minCount``); ``count`` without one."""
        self.per_pod = dict(per_pod)
        self.requests = {resource: amount * count for resource, amount in per_pod.items()}
        """Total counted request of the pod set (per pod x effective count)."""
        self.tolerations = tolerations
        self.node_selector = dict(node_selector)
        self.affinity = affinity
        self.topology = topology
        """The pod set's topology request (docs/concepts.md#topology-aware-scheduling)."""
        self.tas_per_pod: Mapping[str, int] = dict(tas_per_pod or {})
        """Per-pod requests as the nodes see them (before transformations): what placement
        packs into a domain."""

    def scaled_to(self, count: int) -> PodSetInfo:
        """This pod set with ``count`` pods (a partial-admission candidate): pure."""
        if count == self.count:
            return self
        return PodSetInfo(
            name=self.name,
            count=count,
            per_pod=self.per_pod,
            tolerations=self.tolerations,
            node_selector=self.node_selector,
            affinity=self.affinity,
            min_count=min(self.min_count, count),
            topology=self.topology,
            tas_per_pod=self.tas_per_pod,
        )


def counted_per_pod(
    requests: Mapping[str, Quantity], config: ResourcesConfig | None
) -> dict[str, int]:
    """Per-pod counted requests as integers: prefixes, transformations, negatives: pure."""
    if config is None:
        return {name: max(0, to_int(name, value)) for name, value in requests.items()}
    kept = {
        name: value
        for name, value in requests.items()
        if not any(name.startswith(prefix) for prefix in config.exclude_resource_prefixes)
    }
    transformations = {item.input: item for item in config.transformations}
    nanos: dict[str, int] = {}
    outputs: dict[str, int] = {}
    for name, value in kept.items():
        rule = transformations.get(name)
        if rule is None:
            nanos[name] = nanos.get(name, 0) + value.nanos
            continue
        amount = value.nanos
        if rule.multiply_by and rule.multiply_by in kept:
            amount = amount * kept[rule.multiply_by].nanos // NANOS_PER_UNIT
        for output, factor in rule.outputs.items():
            outputs[output] = outputs.get(output, 0) + amount * factor.nanos // NANOS_PER_UNIT
        if rule.strategy != "Replace":
            nanos[name] = nanos.get(name, 0) + value.nanos
    for output, amount in outputs.items():
        nanos[output] = nanos.get(output, 0) + max(0, amount)
    return {name: max(0, to_int(name, Quantity(amount))) for name, amount in nanos.items()}


_INTERNED: dict[tuple[object, ...], PodSetInfo] = {}
_INTERN_LIMIT = 200_000


def pod_set_info(pod_set: PodSet, reclaimable: int, config: ResourcesConfig | None) -> PodSetInfo:
    """The (interned) ``PodSetInfo`` of one pod set with ``reclaimable`` pods released: pure."""
    template = pod_set.template
    requests = pod_set.requests
    tolerations = template.tolerations if template is not None else ()
    node_selector = template.node_selector if template is not None else {}
    affinity = template.required_node_affinity if template is not None else None
    count = max(0, pod_set.count - reclaimable)
    min_count = pod_set.min_count
    shape = (
        pod_set.name,
        count,
        min_count,
        tuple(sorted(requests.items())),
        tolerations,
        tuple(sorted(node_selector.items())),
        affinity,
        id(config),
        repr(pod_set.topology_request) if pod_set.topology_request else None,
    )
    found = _INTERNED.get(shape)
    if found is None:
        if len(_INTERNED) >= _INTERN_LIMIT:
            _INTERNED.clear()
        found = PodSetInfo(
            name=pod_set.name,
            count=count,
            per_pod=counted_per_pod({str(name): value for name, value in requests.items()}, config),
            tolerations=tolerations,
            node_selector=node_selector,
            affinity=affinity,
            min_count=min_count,
            topology=read_topology_request(pod_set.topology_request),
            tas_per_pod=to_ints({str(name): value for name, value in requests.items()}),
        )
        _INTERNED[shape] = found
    return found


def pod_set_infos(workload: Workload, config: ResourcesConfig | None) -> tuple[PodSetInfo, ...]:
    """``PodSetInfo`` of every pod set, reclaimable pods taken into account: pure."""
    reclaimable = {item.name: item.count for item in workload.status.reclaimable_pods}
    return tuple(
        pod_set_info(pod_set, reclaimable.get(pod_set.name, 0), config)
        for pod_set in workload.spec.pod_sets
    )


def queue_timestamp(workload: Workload, *, pods_ready_eviction: bool = True) -> datetime:
    """Queue-order timestamp (docs/scheduling.md#queue-order): pure.

    The creation time, or the eviction time after an admission-check eviction,
    and after a PodsReady timeout unless ``pods_ready_eviction`` is False
    (waitForPodsReady ``requeuingStrategy.timestamp: Creation``).
    """
    evicted = workload.status.condition("Evicted")
    reasons = ("PodsReadyTimeout", "AdmissionCheck") if pods_ready_eviction else ("AdmissionCheck",)
    if (
        evicted is not None
        and evicted.status == "True"
        and evicted.reason in reasons
        and evicted.last_transition_time is not None
    ):
        return evicted.last_transition_time
    created = workload.metadata.creation_timestamp
    return created if created is not None else EPOCH


def holds_reservation(workload: Workload) -> bool:
    """Whether the object records a quota reservation: pure.

    That is ``status.admission`` set and ``QuotaReserved=True``.
    """
    return workload.status.admission is not None and workload.status.is_condition_true(
        "QuotaReserved"
    )


def is_finished(workload: Workload) -> bool:
    """Whether the object says the workload finished: pure."""
    return workload.status.is_condition_true("Finished")


def failed_admission_checks(workload: Workload) -> bool:
    """Any admission check in state Retry or Rejected: pure."""
    return any(check.state in ("Retry", "Rejected") for check in workload.status.admission_checks)


def admitted_usage(workload: Workload) -> list[tuple[str, int, dict[str, str], dict[str, int]]]:
    """Per pod set of a recorded admission: (name, count, flavors, usage ints): pure.

    From admission on, usage comes from ``resourceUsage``, scaled down to
    the pods still to run: ``spec count - reclaimable`` when that is below
    the admitted count (docs/scheduling.md#workload-usage).  The spec count falls
    under the admitted one when an elastic Job scaled down in place: its
    Workload keeps the admission it had and charges only the pods it now
    asks for (docs/concepts.md#elastic-jobs).  A partial admission (admitted
    count below the spec's) charges ``admitted - reclaimable``.
    """
    admission = workload.status.admission
    assert admission is not None
    reclaimable = {item.name: item.count for item in workload.status.reclaimable_pods}
    spec_counts = {pod_set.name: pod_set.count for pod_set in workload.spec.pod_sets}
    result = []
    for assignment in admission.pod_set_assignments:
        count = (
            assignment.count
            if assignment.count is not None
            else spec_counts.get(assignment.name, 1)
        )
        usage = {
            str(name): to_int(name, value) for name, value in assignment.resource_usage.items()
        }
        released = reclaimable.get(assignment.name, 0)
        asked = spec_counts.get(assignment.name, count)
        remaining = max(0, min(count, asked) - released)
        if remaining < count and count > 0:
            usage = {name: amount * remaining // count for name, amount in usage.items()}
        flavors = {str(resource): str(flavor) for resource, flavor in assignment.flavors.items()}
        result.append((str(assignment.name), count, flavors, usage))
    return result


@dataclass(frozen=True, slots=True)
class Reservation:
    """The quota a Workload's ``status.admission`` records it holds."""

    cluster_queue: str
    usage: FRValues
    """Total per FR over its pod sets."""
    pod_sets: tuple[PodSetAdmission, ...]
    reserved_at: datetime | None
    """When ``QuotaReserved`` became true (for candidate order)."""


def _topology_of(raw: Mapping[str, Any] | None) -> TopologyAssignment | None:
    """A recorded ``topologyAssignment``; None when absent or unreadable: pure.

    The API server's schema checks the encoding; one it let through that
    still cannot be read holds no domain kuota could account for.
    """
    if not raw:
        return None
    try:
        return TopologyAssignment.decoded(raw)
    except (ValueError, TypeError, AttributeError):
        return None


def reservation(workload: Workload) -> Reservation:
    """The reservation recorded in ``workload``'s status (``holds_reservation`` is true): pure."""
    admission = workload.status.admission
    assert admission is not None
    usage: FRValues = {}
    pod_sets = []
    recorded = admission.pod_set_assignments
    for (name, count, flavors, amounts), assignment in zip(
        admitted_usage(workload), recorded, strict=True
    ):
        for resource, amount in amounts.items():
            flavor = flavors.get(resource)
            if flavor is not None:
                usage[(flavor, resource)] = usage.get((flavor, resource), 0) + amount
        pod_sets.append(
            PodSetAdmission(
                name=name,
                count=count,
                flavors=dict(flavors),
                resource_usage={r: to_quantity(r, a) for r, a in amounts.items()},
                topology_assignment=_topology_of(assignment.topology_assignment),
                delayed_topology_request=assignment.delayed_topology_request,
            )
        )
    condition = workload.status.condition("QuotaReserved")
    return Reservation(
        cluster_queue=str(admission.cluster_queue),
        usage=usage,
        pod_sets=tuple(pod_sets),
        reserved_at=condition.last_transition_time if condition is not None else None,
    )


__all__ = [
    "EPOCH",
    "PodSetInfo",
    "Reservation",
    "admitted_usage",
    "counted_per_pod",
    "failed_admission_checks",
    "holds_reservation",
    "is_finished",
    "pod_set_info",
    "pod_set_infos",
    "queue_timestamp",
    "reservation",
]
