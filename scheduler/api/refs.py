"""Names and closed value sets of the Kueue API, as types.

A ClusterQueue name and a flavor name are both strings on the wire, but
mixing them up is a bug the type checker can catch: each kind of name gets a
``NewType``.  The API's enumerations are ``Literal``
types, and each comes with a tuple of its values in the order the ``Literal``
lists them, so validation can render ``use one of StrictFIFO, BestEffortFIFO``
from the same source of truth.

Parsing does not reject an unknown enum value (that is validation's FMT-ENUM
rule, reported with its own rule id); a model field typed with one of these
literals therefore holds a listed value once the object has been validated.
"""

from __future__ import annotations

from typing import Final, Literal, NewType, get_args

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
# Every constant of the Kueue API lives in this module (groups, versions,
# labels, annotations, finalizers, condition types): the scheduler, the
# webhook, the CLI and the certificate bootstrap import them from here and
# never spell them again.

KUEUE_GROUP: Final = "kueue.x-k8s.io"
CONFIG_GROUP: Final = "config.kueue.x-k8s.io"
KueueVersion = Literal["v1alpha1", "v1alpha2", "v1beta1", "v1beta2"]
KUEUE_VERSIONS: tuple[KueueVersion, ...] = get_args(KueueVersion)
"""Every served version of ``kueue.x-k8s.io``, oldest first."""
HUB_VERSION: Final = "v1beta2"
"""The storage version, the hub of every conversion, the version kuota reads and writes."""
LEGACY_VERSIONS: Final = ("v1alpha1", "v1alpha2")
"""The early versions (``quota.min/max``) judged by the legacy rules first."""
V1BETA2: Final = f"{KUEUE_GROUP}/{HUB_VERSION}"
CONFIG_V1BETA2: Final = f"{CONFIG_GROUP}/v1beta2"
CONFIG_V1BETA1: Final = f"{CONFIG_GROUP}/v1beta1"
"""The Configuration's previous version, read only by ``kuota convert``."""
LEGACY_API_VERSIONS: Final = tuple(f"{KUEUE_GROUP}/{version}" for version in LEGACY_VERSIONS)

# --- labels and annotations ----------------------------------------------------

QUEUE_NAME_LABEL: Final = f"{KUEUE_GROUP}/queue-name"
"""The LocalQueue a job asks for; kuota also reads a legacy annotation of the same key."""
QUEUE_NAME_ANNOTATION: Final = QUEUE_NAME_LABEL
JOB_UID_LABEL: Final = f"{KUEUE_GROUP}/job-uid"
"""On a Workload: the UID of the Job it was made for."""
POD_SET_LABEL: Final = f"{KUEUE_GROUP}/podset"
LOCAL_QUEUE_LABEL: Final = f"{KUEUE_GROUP}/local-queue-name"
CLUSTER_QUEUE_LABEL: Final = f"{KUEUE_GROUP}/cluster-queue-name"
PRIORITY_CLASS_LABEL: Final = f"{KUEUE_GROUP}/priority-class"
"""On a job: the WorkloadPriorityClass of its Workload."""
MAX_EXEC_TIME_SECONDS_KEY: Final = f"{KUEUE_GROUP}/max-exec-time-seconds"
JOB_MIN_PARALLELISM_ANNOTATION: Final = f"{KUEUE_GROUP}/job-min-parallelism"
JOB_COMPLETIONS_EQUAL_PARALLELISM_ANNOTATION: Final = (
    f"{KUEUE_GROUP}/job-completions-equal-parallelism"
)
PREBUILT_WORKLOAD_KEY: Final = f"{KUEUE_GROUP}/prebuilt-workload-name"
ELASTIC_JOB_ANNOTATION: Final = f"{KUEUE_GROUP}/elastic-job"
WORKLOAD_SLICE_NAME_ANNOTATION: Final = f"{KUEUE_GROUP}/workload-slice-name"
WORKLOAD_SLICE_REPLACEMENT_ANNOTATION: Final = f"{KUEUE_GROUP}/workload-slice-replacement-for"
"""On a new workload slice of an elastic job: ``namespace/name`` of the slice it replaces."""
SAFE_TO_FORCEFULLY_DELETE_ANNOTATION: Final = f"{KUEUE_GROUP}/safe-to-forcefully-delete"
"""A pod's opt-in to be force-deleted when stuck terminating on an unreachable node."""
ELASTIC_JOB_GATE: Final = f"{KUEUE_GROUP}/elastic-job"
"""The scheduling gate on an elastic job's pods, lifted for as many pods as are admitted."""
WORKLOAD_SLICE_REPLACED: Final = "WorkloadSliceReplaced"
"""The ``Finished`` reason of a slice whose replacement was admitted."""
PRIORITY_BOOST_ANNOTATION: Final = f"{KUEUE_GROUP}/priority-boost"
ADMISSION_GATED_BY_ANNOTATION: Final = f"{KUEUE_GROUP}/admission-gated-by"
MULTIKUEUE_INCREMENTAL_DISPATCHER: Final = f"{KUEUE_GROUP}/multikueue-dispatcher-incremental"
MULTIKUEUE_ORIGIN_LABEL: Final = f"{KUEUE_GROUP}/multikueue-origin"
"""On the Workloads and Jobs MultiKueue creates on a worker: the ``origin`` of the manager."""
MULTIKUEUE_KUBECONFIG_KEY: Final = "kubeconfig"
"""The key of a MultiKueueCluster's Secret that holds the worker's kubeconfig."""

# --- admission-check controllers (AdmissionCheck spec.controllerName) ------------------

MULTIKUEUE_CONTROLLER: Final = f"{KUEUE_GROUP}/multikueue"
"""Also the ``spec.managedBy`` of a manager's Job that MultiKueue runs on a worker (the
batch Job controller leaves it alone)."""
PROVISIONING_REQUEST_CONTROLLER: Final = f"{KUEUE_GROUP}/provisioning-request"
MANAGED_LABEL: Final = f"{KUEUE_GROUP}/managed"
"""On a plain Pod: ``"true"`` once kuota's webhook took it in (the scheduler watches only these)."""
MANAGED_LABEL_VALUE: Final = "true"
POD_GROUP_NAME_LABEL: Final = f"{KUEUE_GROUP}/pod-group-name"
POD_GROUP_TOTAL_COUNT_ANNOTATION: Final = f"{KUEUE_GROUP}/pod-group-total-count"
ROLE_HASH_ANNOTATION: Final = f"{KUEUE_GROUP}/role-hash"
"""On a queued Pod: the hash of its spec's shape; a pod group's pod sets are its roles."""
POD_SUSPENDING_PARENT_ANNOTATION: Final = f"{KUEUE_GROUP}/pod-suspending-parent"
"""On a pod template (Deployment): the framework whose webhook queued its pods."""
POD_GROUP_FAST_ADMISSION_ANNOTATION: Final = f"{KUEUE_GROUP}/pod-group-fast-admission"
"""``"true"``: the group's Workload is made from its first pod, sized by the total count."""
POD_GROUP_SERVING_ANNOTATION: Final = f"{KUEUE_GROUP}/pod-group-serving"
"""``"true"``: the group serves (a StatefulSet's): it never finishes."""
IS_GROUP_WORKLOAD_ANNOTATION: Final = f"{KUEUE_GROUP}/is-group-workload"
"""``"true"`` on the Workload of a pod group."""
ADMISSION_SCHEDULING_GATE: Final = f"{KUEUE_GROUP}/admission"
"""The scheduling gate a queued Pod waits behind until its Workload is admitted."""

# --- finalizers -------------------------------------------------------------------

RESOURCE_IN_USE_FINALIZER: Final = f"{KUEUE_GROUP}/resource-in-use"
POD_MANAGED_FINALIZER: Final = f"{KUEUE_GROUP}/managed"
"""On a queued Pod: kept until kuota has accounted for the Pod's end."""

# --- condition types ---------------------------------------------------------------

QUOTA_RESERVED: Final = "QuotaReserved"
ON_HOLD: Final = "OnHold"
"""The ``QuotaReserved=False`` reason of a Workload held back on purpose (a StatefulSet
scaled to zero): it is not queued until the hold is taken off."""
ADMITTED: Final = "Admitted"
EVICTED: Final = "Evicted"
PREEMPTED: Final = "Preempted"
REQUEUED: Final = "Requeued"
FINISHED: Final = "Finished"
ACTIVE: Final = "Active"
"""The ClusterQueue / LocalQueue / AdmissionCheck condition."""
DEACTIVATION_TARGET: Final = "DeactivationTarget"
"""A Workload condition: it is to be deactivated (reason: the cause, e.g. ``AdmissionCheck``)."""
PODS_READY: Final = "PodsReady"
"""A Workload condition: its job's pods are ready (docs/concepts.md#pods-ready)."""
WAITING_FOR_REPLACEMENT_PODS: Final = "WaitingForReplacementPods"
"""A pod group's Workload misses pods that failed or were deleted (docs/concepts.md#pod-groups)."""
SCHEDULER_WORKLOAD_CONDITIONS: Final = (
    QUOTA_RESERVED,
    ADMITTED,
    EVICTED,
    PREEMPTED,
    REQUEUED,
    FINISHED,
    DEACTIVATION_TARGET,
    PODS_READY,
    WAITING_FOR_REPLACEMENT_PODS,
)
"""The Workload conditions the scheduler writes (with ``status.admission``): its applied fields."""

# --- field managers ----------------------------------------------------------------

ADMISSION_FIELD_MANAGER: Final = "kueue-admission"
"""The server-side-apply field manager of a Workload's admission status, Kueue's own name:
kuota and Kueue's tooling own ``status.admission`` and those conditions together."""
RECLAIMABLE_PODS_FIELD_MANAGER: Final = "kueue-reclaimable-pods"
"""The server-side-apply field manager of a Workload's ``status.reclaimablePods``, Kueue's own
name (its Job controller writes them alone)."""

DEFAULT_POD_SET_NAME = PodSetName("main")

# --- closed value sets -----------------------------------------------------------

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

# --- Configuration -------------------------------------------------------------

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
CustomLabelSourceKind = Literal["ClusterQueue", "Cohort", "LocalQueue", "Workload"]
"""``metrics.customLabels[].sourceKind``, in the order the labels follow one another on a
series (sorted by name, as Kueue sorts them)."""
CUSTOM_LABEL_SOURCE_KINDS: tuple[CustomLabelSourceKind, ...] = get_args(CustomLabelSourceKind)

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

KUEUE_PLURALS: Final[dict[KueueKind, str]] = {
    "ResourceFlavor": "resourceflavors",
    "ClusterQueue": "clusterqueues",
    "LocalQueue": "localqueues",
    "Cohort": "cohorts",
    "Workload": "workloads",
    "WorkloadPriorityClass": "workloadpriorityclasses",
    "AdmissionCheck": "admissionchecks",
    "MultiKueueConfig": "multikueueconfigs",
    "MultiKueueCluster": "multikueueclusters",
    "Topology": "topologies",
}
"""The resource (plural) name of every kind in the API's paths and RBAC rules."""
NAMESPACED_KINDS: Final[frozenset[KueueKind]] = frozenset({"LocalQueue", "Workload"})
