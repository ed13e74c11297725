"""Quota-holding kinds: ResourceFlavor, ClusterQueue, Cohort, LocalQueue (docs/concepts.md).

Defaults of the CRD schema are already applied by the parser
(docs/validation.md#defaulting): a parsed ClusterQueue always has a queueing strategy, a
stop policy, a preemption policy and a flavor-fungibility policy, so nothing
downstream needs to know what "absent" meant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from scheduler.api.models.common import (
    KEEPS_EMPTY,
    Condition,
    FairSharing,
    FairSharingStatus,
    FlavorUsage,
    LabelSelector,
    ObjectMeta,
    ResourceGroup,
    Taint,
    Toleration,
    frozen_map,
    read_from,
)
from scheduler.api.quantity import Quantity
from scheduler.api.refs import V1BETA2 as API_VERSION
from scheduler.api.refs import (
    AdmissionCheckName,
    AdmissionMode,
    BorrowWithinCohortPolicy,
    ClusterQueueName,
    CohortName,
    FlavorName,
    FungibilityPolicy,
    FungibilityPreference,
    MigrationMode,
    QueueingStrategy,
    ReclaimWithinCohortPolicy,
    ResourceName,
    StopPolicy,
    WithinClusterQueuePolicy,
)

# --- ResourceFlavor -----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceFlavorSpec:
    node_labels: Mapping[str, str] = field(default_factory=frozen_map)
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceFlavor:
    kind: Literal["ResourceFlavor"] = "ResourceFlavor"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ResourceFlavorSpec = field(default_factory=ResourceFlavorSpec)

    @property
    def name(self) -> FlavorName:
        return FlavorName(self.metadata.name)


# --- ClusterQueue -------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FlavorFungibility:
    """docs/concepts.md#flavor-fungibility, defaults applied."""

    when_can_borrow: FungibilityPolicy = "MayStopSearch"
    when_can_preempt: FungibilityPolicy = "TryNextFlavor"
    preference: FungibilityPreference | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BorrowWithinCohort:
    policy: BorrowWithinCohortPolicy = "Never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterQueuePreemption:
    """docs/concepts.md#preemption, defaults applied."""

    within_cluster_queue: WithinClusterQueuePolicy = "Never"
    reclaim_within_cohort: ReclaimWithinCohortPolicy = "Never"
    borrow_within_cohort: BorrowWithinCohort = field(default_factory=BorrowWithinCohort)


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionCheckStrategyRule:
    name: AdmissionCheckName
    on_flavors: tuple[FlavorName, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionChecksStrategy:
    admission_checks: tuple[AdmissionCheckStrategyRule, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmissionScope:
    admission_mode: AdmissionMode | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MigrationConstraints:
    last_acceptable_flavor_name: str | None = field(default=None, metadata=KEEPS_EMPTY)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConcurrentAdmissionMigration:
    mode: MigrationMode | None = None
    constraints: MigrationConstraints | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConcurrentAdmissionPolicy:
    """Stored, not acted on (docs/api-differences.md#kuota-decisions)."""

    migration: ConcurrentAdmissionMigration | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterQueueSpec:
    resource_groups: tuple[ResourceGroup, ...] = ()
    cohort_name: CohortName | None = None
    queueing_strategy: QueueingStrategy = "BestEffortFIFO"
    namespace_selector: LabelSelector | None = None
    """``None`` matches no namespace; an empty selector matches all."""
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    preemption: ClusterQueuePreemption = field(default_factory=ClusterQueuePreemption)
    admission_checks_strategy: AdmissionChecksStrategy | None = None
    stop_policy: StopPolicy = "None"
    fair_sharing: FairSharing | None = None
    admission_scope: AdmissionScope | None = None
    concurrent_admission_policy: ConcurrentAdmissionPolicy | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterQueueStatus:
    conditions: tuple[Condition, ...] = ()
    flavors_reservation: tuple[FlavorUsage, ...] = ()
    flavors_usage: tuple[FlavorUsage, ...] = ()
    pending_workloads: int = 0
    reserving_workloads: int = 0
    admitted_workloads: int = 0
    fair_sharing: FairSharingStatus | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterQueue:
    kind: Literal["ClusterQueue"] = "ClusterQueue"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ClusterQueueSpec = field(default_factory=ClusterQueueSpec)
    status: ClusterQueueStatus = field(default_factory=ClusterQueueStatus)

    @property
    def name(self) -> ClusterQueueName:
        return ClusterQueueName(self.metadata.name)


# --- Cohort -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CohortSpec:
    parent_name: CohortName | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_sharing: FairSharing | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CohortStatus:
    fair_sharing: FairSharingStatus | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Cohort:
    kind: Literal["Cohort"] = "Cohort"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: CohortSpec = field(default_factory=CohortSpec)
    status: CohortStatus = field(default_factory=CohortStatus)

    @property
    def name(self) -> CohortName:
        return CohortName(self.metadata.name)


# --- LocalQueue ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalQueueResourceUsage:
    name: ResourceName
    total: Quantity = field(default_factory=Quantity.zero)


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalQueueFlavorUsage:
    name: FlavorName
    resources: tuple[LocalQueueResourceUsage, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalQueueSpec:
    cluster_queue: ClusterQueueName | None = None
    stop_policy: StopPolicy = "None"
    fair_sharing: FairSharing | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalQueueAdmissionFairSharingStatus:
    consumed_resources: Mapping[ResourceName, Quantity] = field(default_factory=frozen_map)
    last_update: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalQueueStatus:
    conditions: tuple[Condition, ...] = ()
    pending_workloads: int = 0
    reserving_workloads: int = 0
    admitted_workloads: int = 0
    flavors_reservation: tuple[LocalQueueFlavorUsage, ...] = ()
    flavors_usage: tuple[LocalQueueFlavorUsage, ...] = ()
    weighted_share: int | None = field(
        default=None, metadata=read_from("fairSharing", "weightedShare")
    )
    admission_fair_sharing: LocalQueueAdmissionFairSharingStatus | None = field(
        default=None, metadata=read_from("fairSharing", "admissionFairSharingStatus")
    )
    """The decayed usage admission fair sharing keeps (docs/concepts.md#admission-fair-sharing):
    read back when the scheduler starts."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalQueue:
    kind: Literal["LocalQueue"] = "LocalQueue"
    api_version: str = API_VERSION
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: LocalQueueSpec = field(default_factory=LocalQueueSpec)
    status: LocalQueueStatus = field(default_factory=LocalQueueStatus)

    @property
    def name(self) -> str:
        return self.metadata.name


__all__ = [
    "AdmissionCheckStrategyRule",
    "AdmissionChecksStrategy",
    "AdmissionScope",
    "BorrowWithinCohort",
    "ClusterQueue",
    "ClusterQueuePreemption",
    "ClusterQueueSpec",
    "ClusterQueueStatus",
    "Cohort",
    "CohortSpec",
    "CohortStatus",
    "ConcurrentAdmissionMigration",
    "ConcurrentAdmissionPolicy",
    "FlavorFungibility",
    "LocalQueue",
    "LocalQueueAdmissionFairSharingStatus",
    "LocalQueueFlavorUsage",
    "LocalQueueResourceUsage",
    "LocalQueueSpec",
    "LocalQueueStatus",
    "MigrationConstraints",
    "ResourceFlavor",
    "ResourceFlavorSpec",
]
