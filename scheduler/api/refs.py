"""Names and closed value sets of the Kueue API, as types.

A ClusterQueue name and a flavor name are both strings on the wire, but
mixing them up is a bug the type checker can catch: each kind of name gets a
``NewType``.  The API's enumerations (api.md sections 2–12) are ``Literal``
types, and each comes with a tuple of its values in the order the spec lists
them, so validation can render ``use one of StrictFIFO, BestEffortFIFO``
from the same source of truth.

Parsing does not reject an unknown enum value (that is validation's FMT-ENUM
rule, reported with its own rule id); a model field typed with one of these
literals therefore holds a listed value once the object has been validated.
"""

from __future__ import annotations

from typing import Literal, NewType, get_args

# --- names ------------------------------------------------------------------

FlavorName = NewType("FlavorName", str)
ClusterQueueName = NewType("ClusterQueueName", str)
CohortName = NewType("CohortName", str)
LocalQueueName = NewType("LocalQueueName", str)
ResourceName = NewType("ResourceName", str)
NamespaceName = NewType("NamespaceName", str)
WorkloadName = NewType("WorkloadName", str)
WorkloadKey = NewType("WorkloadKey", str)
"""``<namespace>/<name>`` of a Workload: its identity inside the scheduler."""
PodSetName = NewType("PodSetName", str)
PriorityClassName = NewType("PriorityClassName", str)
AdmissionCheckName = NewType("AdmissionCheckName", str)
TopologyName = NewType("TopologyName", str)
MultiKueueClusterName = NewType("MultiKueueClusterName", str)


def workload_key(namespace: str, name: str) -> WorkloadKey:
    """The ``namespace/name`` key of a Workload: pure."""
    return WorkloadKey(f"{namespace}/{name}")


# --- API groups and versions -------------------------------------------------

KUEUE_GROUP = "kueue.x-k8s.io"
CONFIG_GROUP = "config.kueue.x-k8s.io"
V1BETA2 = f"{KUEUE_GROUP}/v1beta2"
CONFIG_V1BETA2 = f"{CONFIG_GROUP}/v1beta2"

DEFAULT_POD_SET_NAME = PodSetName("main")

# --- closed value sets (api.md) ---------------------------------------------

QueueingStrategy = Literal["StrictFIFO", "BestEffortFIFO"]
QUEUEING_STRATEGIES: tuple[QueueingStrategy, ...] = get_args(QueueingStrategy)

StopPolicy = Literal["None", "Hold", "HoldAndDrain"]
STOP_POLICIES: tuple[StopPolicy, ...] = get_args(StopPolicy)

FungibilityPolicy = Literal["MayStopSearch", "TryNextFlavor"]
FUNGIBILITY_POLICIES: tuple[FungibilityPolicy, ...] = get_args(FungibilityPolicy)

FungibilityPreference = Literal["BorrowingOverPreemption", "PreemptionOverBorrowing"]
FUNGIBILITY_PREFERENCES: tuple[FungibilityPreference, ...] = get_args(FungibilityPreference)

WithinClusterQueuePolicy = Literal["Never", "LowerPriority", "LowerOrNewerEqualPriority"]
WITHIN_CLUSTER_QUEUE_POLICIES: tuple[WithinClusterQueuePolicy, ...] = get_args(
    WithinClusterQueuePolicy
)

ReclaimWithinCohortPolicy = Literal["Never", "LowerPriority", "Any"]
RECLAIM_WITHIN_COHORT_POLICIES: tuple[ReclaimWithinCohortPolicy, ...] = get_args(
    ReclaimWithinCohortPolicy
)

BorrowWithinCohortPolicy = Literal["Never", "LowerPriority"]
BORROW_WITHIN_COHORT_POLICIES: tuple[BorrowWithinCohortPolicy, ...] = get_args(
    BorrowWithinCohortPolicy
)

AdmissionMode = Literal["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"]
ADMISSION_MODES: tuple[AdmissionMode, ...] = get_args(AdmissionMode)

MigrationMode = Literal["TryPreferredFlavors", "RetainFirstAdmission"]
MIGRATION_MODES: tuple[MigrationMode, ...] = get_args(MigrationMode)

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
TAINT_EFFECTS: tuple[TaintEffect, ...] = get_args(TaintEffect)

TolerationOperator = Literal["Equal", "Exists"]
TOLERATION_OPERATORS: tuple[TolerationOperator, ...] = get_args(TolerationOperator)

SelectorOperator = Literal["In", "NotIn", "Exists", "DoesNotExist"]
SELECTOR_OPERATORS: tuple[SelectorOperator, ...] = get_args(SelectorOperator)

NodeSelectorOperator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
NODE_SELECTOR_OPERATORS: tuple[NodeSelectorOperator, ...] = get_args(NodeSelectorOperator)

ConditionStatus = Literal["True", "False", "Unknown"]
CONDITION_STATUSES: tuple[ConditionStatus, ...] = get_args(ConditionStatus)

PriorityClassGroup = Literal["kueue.x-k8s.io", "scheduling.k8s.io"]
PRIORITY_CLASS_GROUPS: tuple[PriorityClassGroup, ...] = get_args(PriorityClassGroup)

PriorityClassKind = Literal["WorkloadPriorityClass", "PriorityClass"]
PRIORITY_CLASS_KINDS: tuple[PriorityClassKind, ...] = get_args(PriorityClassKind)

AdmissionCheckState = Literal["Pending", "Ready", "Retry", "Rejected"]
ADMISSION_CHECK_STATES: tuple[AdmissionCheckState, ...] = get_args(AdmissionCheckState)

PreemptionGatePosition = Literal["Closed", "Open"]
PREEMPTION_GATE_POSITIONS: tuple[PreemptionGatePosition, ...] = get_args(PreemptionGatePosition)

QuotaManagement = Literal["Manual", "Automated"]
QUOTA_MANAGEMENTS: tuple[QuotaManagement, ...] = get_args(QuotaManagement)

KubeConfigLocationType = Literal["Secret", "Path"]
KUBECONFIG_LOCATION_TYPES: tuple[KubeConfigLocationType, ...] = get_args(KubeConfigLocationType)

# --- Configuration (api.md 12) -------------------------------------------------

FairSharingPreemptionStrategy = Literal["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
FAIR_SHARING_PREEMPTION_STRATEGIES: tuple[FairSharingPreemptionStrategy, ...] = get_args(
    FairSharingPreemptionStrategy
)

RequeuingTimestamp = Literal["Eviction", "Creation"]
REQUEUING_TIMESTAMPS: tuple[RequeuingTimestamp, ...] = get_args(RequeuingTimestamp)

TransformationStrategy = Literal["Retain", "Replace"]
TRANSFORMATION_STRATEGIES: tuple[TransformationStrategy, ...] = get_args(TransformationStrategy)

QuotaCheckStrategy = Literal["BlockUndeclared", "IgnoreUndeclared"]
QUOTA_CHECK_STRATEGIES: tuple[QuotaCheckStrategy, ...] = get_args(QuotaCheckStrategy)

# --- kinds ------------------------------------------------------------------

KueueKind = Literal[
    "ResourceFlavor",
    "ClusterQueue",
    "LocalQueue",
    "Cohort",
    "Workload",
    "WorkloadPriorityClass",
    "AdmissionCheck",
    "MultiKueueConfig",
    "MultiKueueCluster",
    "Topology",
]
KUEUE_KINDS: tuple[KueueKind, ...] = get_args(KueueKind)
