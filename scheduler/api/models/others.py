"""Kinds kuota stores and validates but barely schedules with (docs/concepts.md).

WorkloadPriorityClass gives priorities; AdmissionCheck, MultiKueueConfig,
MultiKueueCluster and Topology are kept so that manifests written for Kueue
load and validate, even where kuota does not act on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from scheduler.api.models.common import Condition, ObjectMeta
from scheduler.api.refs import V1BETA2 as API_VERSION


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadPriorityClass:
    """Fields are top level (no spec); ``value`` is ``None`` only when omitted (WPC-1)."""

    kind: Literal["WorkloadPriorityClass"] = "WorkloadPriorityClass"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    value: int | None = None
    description: str = ""

    @property
    def name(self) -> str:
        return self.metadata.name


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionCheckParameters:
    api_group: str = ""
    kind: str = ""
    name: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionCheckSpec:
    controller_name: str = ""
    parameters: AdmissionCheckParameters | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionCheckObjectStatus:
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionCheck:
    kind: Literal["AdmissionCheck"] = "AdmissionCheck"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: AdmissionCheckSpec = field(default_factory=AdmissionCheckSpec)
    status: AdmissionCheckObjectStatus = field(default_factory=AdmissionCheckObjectStatus)

    @property
    def name(self) -> str:
        return self.metadata.name


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiKueueConfigSpec:
    clusters: tuple[str, ...] = ()
    quota_management: str | None = None
    """Absent behaves as ``Manual``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiKueueConfig:
    kind: Literal["MultiKueueConfig"] = "MultiKueueConfig"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: MultiKueueConfigSpec = field(default_factory=MultiKueueConfigSpec)

    @property
    def name(self) -> str:
        return self.metadata.name


@dataclass(frozen=True, slots=True, kw_only=True)
class KubeConfigSource:
    location: str = ""
    location_type: str = "Secret"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterProfileRef:
    name: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterSource:
    kube_config: KubeConfigSource | None = None
    cluster_profile_ref: ClusterProfileRef | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiKueueClusterSpec:
    cluster_source: ClusterSource | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiKueueClusterStatus:
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiKueueCluster:
    kind: Literal["MultiKueueCluster"] = "MultiKueueCluster"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: MultiKueueClusterSpec = field(default_factory=MultiKueueClusterSpec)
    status: MultiKueueClusterStatus = field(default_factory=MultiKueueClusterStatus)

    @property
    def name(self) -> str:
        return self.metadata.name


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologyLevel:
    node_label: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySpec:
    levels: tuple[TopologyLevel, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Topology:
    kind: Literal["Topology"] = "Topology"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: TopologySpec = field(default_factory=TopologySpec)

    @property
    def name(self) -> str:
        return self.metadata.name


__all__ = [
    "AdmissionCheck",
    "AdmissionCheckObjectStatus",
    "AdmissionCheckParameters",
    "AdmissionCheckSpec",
    "ClusterProfileRef",
    "ClusterSource",
    "KubeConfigSource",
    "MultiKueueCluster",
    "MultiKueueClusterSpec",
    "MultiKueueClusterStatus",
    "MultiKueueConfig",
    "MultiKueueConfigSpec",
    "Topology",
    "TopologyLevel",
    "TopologySpec",
    "WorkloadPriorityClass",
]
