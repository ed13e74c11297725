"""Workload (docs/concepts.md#workload): the unit the scheduler queues, admits and evicts.

A pod set keeps only what scheduling reads from its pod template — the
effective per-pod requests, node selector, required node affinity and
tolerations — plus the raw template, so the object can be written back
unchanged.  The effective requests follow Kubernetes' pod-request rule:

* a container's request missing where a limit exists takes the limit;
* regular containers and restartable ("sidecar") init containers add up;
* each ordinary init container runs alone beside the sidecars started before
  it, so the pod needs the maximum of that and the steady state;
* pod-level ``resources.requests`` (when given) replace the container sum
  for the resources they name; ``overhead`` is added on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from scheduler.api.models.common import (
    KEEPS_EMPTY,
    Condition,
    ObjectMeta,
    Toleration,
    frozen_map,
    read_from,
)
from scheduler.api.quantity import Quantity
from scheduler.api.refs import (
    DEFAULT_POD_SET_NAME,
    ClusterQueueName,
    FlavorName,
    LocalQueueName,
    PodSetName,
    ResourceName,
    WorkloadKey,
    workload_key,
)
from scheduler.api.refs import V1BETA2 as API_VERSION

ResourceList = Mapping[ResourceName, Quantity]


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerResources:
    """What one container asks for; ``requests`` already include limits standing in
    for missing requests.
    """

    name: str = ""
    requests: ResourceList = field(default_factory=frozen_map)
    limits: ResourceList = field(default_factory=frozen_map)
    restart_policy: str | None = None
    """Init containers only: ``Always`` marks a sidecar."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelectorRequirement:
    key: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeSelectorTerm:
    """Requirements ANDed; the terms of a node selector are ORed."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


def _add(total: dict[ResourceName, Quantity], more: ResourceList) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, Quantity.zero()) + amount


def _maximum(total: dict[ResourceName, Quantity], other: ResourceList) -> None:
    for name, amount in other.items():
        if name not in total or amount > total[name]:
            total[name] = amount


def effective_pod_requests(
    containers: tuple[ContainerResources, ...],
    init_containers: tuple[ContainerResources, ...] = (),
    *,
    pod_requests: ResourceList | None = None,
    overhead: ResourceList | None = None,
) -> ResourceList:
    """The per-pod requests Kubernetes schedules with (module docstring): pure."""
    steady: dict[ResourceName, Quantity] = {}
    for container in containers:
        _add(steady, container.requests)
    sidecars: dict[ResourceName, Quantity] = {}
    init_peak: dict[ResourceName, Quantity] = {}
    for init in init_containers:
        if init.restart_policy == "Always":
            _add(steady, init.requests)
            _add(sidecars, init.requests)
            _maximum(init_peak, sidecars)
        else:
            running = dict(sidecars)
            _add(running, init.requests)
            _maximum(init_peak, running)
    _maximum(steady, init_peak)
    if pod_requests:
        steady.update(pod_requests)
    if overhead:
        _add(steady, overhead)
    return frozen_map(steady)


@dataclass(frozen=True, slots=True, kw_only=True)
class PodTemplate:
    """The parts of ``podSets[i].template`` the scheduler reads, plus the raw template."""

    labels: Mapping[str, str] = field(default_factory=frozen_map)
    annotations: Mapping[str, str] = field(default_factory=frozen_map)
    containers: tuple[ContainerResources, ...] = ()
    init_containers: tuple[ContainerResources, ...] = ()
    overhead: ResourceList = field(default_factory=frozen_map)
    pod_level_requests: ResourceList = field(default_factory=frozen_map)
    requests: ResourceList = field(default_factory=frozen_map)
    """Effective per-pod requests (``effective_pod_requests``)."""
    node_selector: Mapping[str, str] = field(default_factory=frozen_map)
    required_node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    """``None`` when the template has no required node affinity."""
    tolerations: tuple[Toleration, ...] = ()
    priority_class_name: str | None = None
    raw: Mapping[str, Any] = field(default_factory=frozen_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSet:
    name: PodSetName = DEFAULT_POD_SET_NAME
    count: int = 1
    min_count: int | None = None
    template: PodTemplate | None = None
    """``None`` only when the manifest has no template (validation WL-5 rejects it)."""
    topology_request: Mapping[str, Any] | None = None

    @property
    def requests(self) -> ResourceList:
        """Per-pod requests (empty without a template)."""
        return self.template.requests if self.template is not None else frozen_map()


@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityClassRef:
    group: str = ""
    kind: str = ""
    name: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSpec:
    pod_sets: tuple[PodSet, ...] = ()
    queue_name: LocalQueueName | None = None
    priority_class_ref: PriorityClassRef | None = None
    priority: int | None = None
    """``None`` when absent; the scheduler treats it as 0."""
    active: bool = True
    maximum_execution_time_seconds: int | None = None
    preemption_gates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSetAssignment:
    name: PodSetName = DEFAULT_POD_SET_NAME
    flavors: Mapping[ResourceName, FlavorName] = field(default_factory=frozen_map)
    resource_usage: ResourceList = field(default_factory=frozen_map)
    count: int | None = None
    """``None`` on very old objects: use the spec count."""
    topology_assignment: Mapping[str, Any] | None = None
    delayed_topology_request: str | None = field(default=None, metadata=KEEPS_EMPTY)


@dataclass(frozen=True, slots=True, kw_only=True)
class Admission:
    cluster_queue: ClusterQueueName
    pod_set_assignments: tuple[PodSetAssignment, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RequeueState:
    count: int | None = None
    requeue_at: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReclaimablePod:
    name: PodSetName
    count: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSetUpdate:
    name: PodSetName
    labels: Mapping[str, str] = field(default_factory=frozen_map)
    annotations: Mapping[str, str] = field(default_factory=frozen_map)
    node_selector: Mapping[str, str] = field(default_factory=frozen_map)
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionCheckStatus:
    """One entry of ``status.admissionChecks`` (the state of a check for this workload)."""

    name: str = ""
    state: str = ""
    last_transition_time: datetime | None = None
    message: str = ""
    requeue_after_seconds: int | None = None
    retry_count: int | None = None
    pod_set_updates: tuple[PodSetUpdate, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSetRequest:
    name: PodSetName = DEFAULT_POD_SET_NAME
    resources: ResourceList = field(default_factory=frozen_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvictionCount:
    reason: str = ""
    underlying_cause: str = ""
    count: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class PreemptionGateState:
    name: str = ""
    position: str = ""
    last_transition_time: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadStatus:
    conditions: tuple[Condition, ...] = ()
    admission: Admission | None = None
    requeue_state: RequeueState | None = None
    reclaimable_pods: tuple[ReclaimablePod, ...] = ()
    admission_checks: tuple[AdmissionCheckStatus, ...] = ()
    resource_requests: tuple[PodSetRequest, ...] = ()
    accumulated_past_execution_time_seconds: int | None = None
    evictions: tuple[EvictionCount, ...] = field(
        default=(), metadata=read_from("schedulingStats", "evictions")
    )
    nominated_cluster_names: tuple[str, ...] = ()
    cluster_name: str | None = field(default=None, metadata=KEEPS_EMPTY)
    unhealthy_nodes: tuple[str, ...] = ()
    preemption_gates: tuple[PreemptionGateState, ...] = ()

    def condition(self, type_: str) -> Condition | None:
        """The condition of that type, if any: pure."""
        return next((item for item in self.conditions if item.type == type_), None)

    def is_condition_true(self, type_: str) -> bool:
        found = self.condition(type_)
        return found is not None and found.status == "True"


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    kind: Literal["Workload"] = "Workload"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: WorkloadSpec = field(default_factory=WorkloadSpec)
    status: WorkloadStatus = field(default_factory=WorkloadStatus)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def key(self) -> WorkloadKey:
        return workload_key(self.metadata.namespace, self.metadata.name)


__all__ = [
    "Admission",
    "AdmissionCheckStatus",
    "ContainerResources",
    "EvictionCount",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "PodSet",
    "PodSetAssignment",
    "PodSetRequest",
    "PodSetUpdate",
    "PodTemplate",
    "PreemptionGateState",
    "PriorityClassRef",
    "ReclaimablePod",
    "RequeueState",
    "ResourceList",
    "Workload",
    "WorkloadSpec",
    "WorkloadStatus",
    "effective_pod_requests",
]
