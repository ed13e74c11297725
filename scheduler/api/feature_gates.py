"""Kueue v0.19's feature gates, and what kuota does with each (docs/configuration.md).

A Configuration's ``featureGates`` is a map of gate name to ``true``/``false``.
Every gate of Kueue v0.19 is listed here with Kueue's default (and whether
Kueue locks it to that default), and with one of three stances of kuota's:

* **read**: kuota acts on the gate, both values (``where`` says which part of
  kuota reads it);
* **fixed**: kuota always behaves as the gate set to ``behaves_as`` (the
  feature is built in, or kuota does not have it).  A file that sets the
  gate to that value asks for what kuota does; a file that restates Kueue's
  default, where kuota differs from it, is warned about; a file that sets
  any other value asks for what kuota cannot do and is **refused**;
* **no effect**: the gate changes something kuota has no counterpart for
  (Kueue's internal caches and patches, failed-node replacement, the kinds
  kuota does not manage); any value is accepted with a warning.

Gates Kueue v0.19 locks are refused at a value other than the locked one,
as Kueue refuses them.  Names of gates that earlier Kueue versions had are
accepted with a warning; any other name is an error (CFG-19).

:func:`judge` turns one file's ``featureGates`` into errors and warnings;
:func:`gates_for_validation` gives the validation rules the gate values they
read (the file's value, else kuota's default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from scheduler.api.field import FieldError, FieldPath, error


@dataclass(frozen=True, slots=True)
class Gate:
    """One Kueue gate: Kueue's default and lock, and kuota's stance (module docstring)."""

    kueue_default: bool
    note: str
    """What kuota does about the gate's subject, for messages and the docs."""
    read: bool = False
    behaves_as: bool | None = None
    """``fixed`` stance: the value kuota always behaves as; None with ``read`` False: no effect."""
    locked: bool = False


def _read(default: bool, note: str, *, locked: bool = False) -> Gate:
    return Gate(default, note, read=True, locked=locked)


def _fixed(default: bool, behaves_as: bool, note: str, *, locked: bool = False) -> Gate:
    return Gate(default, note, behaves_as=behaves_as, locked=locked)


def _none(default: bool, note: str, *, locked: bool = False) -> Gate:
    return Gate(default, note, locked=locked)


_TAS_ON = "kuota always does topology-aware scheduling"
_TAS_AS_KUEUE = "kuota's topology-aware scheduling always behaves as Kueue's default here"
_TAS_INTERNAL = "an implementation choice of Kueue's topology cache, with no counterpart in kuota"
_DRA = "kuota does not charge Dynamic Resource Allocation devices to quota"
_INTERNAL = "an implementation choice of Kueue's controllers, with no counterpart in kuota"
_UNMANAGED = "concerns a kind kuota does not manage (Spark)"
_AS_DEFAULT = "kuota manages the kind as the gate's default has it; the gate is not read"
_NO_PROVISIONING = "kuota has no ProvisioningRequest admission check"

GATES: Final[Mapping[str, Gate]] = {
    "PartialAdmission": _read(True, "read by the webhook: off drops minCount from new Workloads"),
    "FlavorFungibility": _fixed(True, True, "kuota always applies flavorFungibility"),
    "VisibilityOnDemand": _read(True, "read by the scheduler: off serves no visibility API"),
    "DisableWaitForPodsReady": _read(
        False, "read by the scheduler: true turns waitForPodsReady off"
    ),
    "PrioritySortingWithinCohort": _fixed(
        True, True, "kuota always orders a cohort's workloads by priority"
    ),
    "FairSharingPreemptWithinNominal": _fixed(
        True, True, "kuota's fair-sharing preemption always reclaims within nominal quota"
    ),
    "FairSharingPrioritizeNonBorrowing": _fixed(
        True, True, "kuota's fair-sharing order always puts non-borrowing workloads first"
    ),
    "MultiKueue": _fixed(
        True, True, "MultiKueue runs wherever kuota-multikueue runs (chart: multikueue.enabled)"
    ),
    "TopologyAwareScheduling": _fixed(True, True, _TAS_ON),
    "LocalQueueMetrics": _read(
        True, "read by the scheduler: off drops the kueue_local_queue_* series"
    ),
    "TASProfileMixed": _fixed(True, True, _TAS_AS_KUEUE),
    "HierarchicalCohorts": _fixed(True, True, "kuota always supports cohort trees", locked=True),
    "AdmissionFairSharing": _read(
        True, "read by the scheduler: false turns admissionFairSharing off"
    ),
    "ObjectRetentionPolicies": _fixed(
        True, True, "kuota applies objectRetentionPolicies when the section is set", locked=True
    ),
    "TASFailedNodeReplacement": _fixed(
        True, True, "kuota places the pods of a failed node again, or evicts (NodeFailures)"
    ),
    "ElasticJobsViaWorkloadSlices": _read(
        True,
        "read by the webhook (Job and Workload rules) and the scheduler: an elastic Job "
        "scales down in place and up by a new workload slice (docs/concepts.md#elastic-jobs)",
    ),
    "ElasticJobsViaWorkloadSlicesWithTAS": _fixed(
        False,
        True,
        "a scaled-up slice of an elastic Job keeps the topology placement of its pods "
        "(docs/concepts.md#elastic-jobs)",
    ),
    "TASFailedNodeReplacementFailFast": _fixed(
        True, True, "kuota evicts a workload placed on a failed node at once (NodeFailures)"
    ),
    "TASReplaceNodeOnPodTermination": _fixed(
        True, True, "a node not Ready fails for a workload once its pods there have ended"
    ),
    "SkipReassignmentForPodOwnedWorkloads": _read(
        True,
        "read by the scheduler: on, the Workload of a single Pod keeps its topology "
        "assignment when its node fails; false moves or evicts it like any other (its "
        "Requeued condition after an eviction is set as for any Workload either way)",
    ),
    "TASReplaceNodeDueToNotReadyOverFixedTime": _read(
        False, "read by the scheduler: true fails a node not Ready for 30 s, whatever its pods do"
    ),
    "ManagedJobsNamespaceSelectorAlwaysRespected": _fixed(
        True, True, "kuota always applies managedJobsNamespaceSelector", locked=True
    ),
    "TASBalancedPlacement": _fixed(False, False, "kuota has no balanced topology placement"),
    "TASAssignmentsEncodingByHostnamePrefix": _fixed(True, True, _TAS_AS_KUEUE),
    "KueueDRAIntegration": _none(True, _DRA),
    "KueueDRAIntegrationExtendedResource": _none(True, _DRA),
    "QuotaCheckStrategy": _fixed(True, True, "kuota always applies resources.quotaCheckStrategy"),
    "KueueDRARejectWorkloadsWhenDRADisabled": _none(True, _DRA),
    "KueueDRAIntegrationPartitionableDevices": _none(True, _DRA),
    "KueueDRAIntegrationConsumableCapacity": _none(False, _DRA),
    "MultiKueueAdaptersForCustomJobs": _fixed(
        True,
        False,
        "kuota's MultiKueue dispatches batch/v1 Jobs only (multiKueue.externalFrameworks)",
    ),
    "WorkloadRequestUseMergePatch": _none(False, _INTERNAL),
    "MultiKueueAllowInsecureKubeconfigs": _fixed(
        False, False, "kuota refuses kubeconfigs that read local files", locked=True
    ),
    "MultiKueueKubeConfigPathValidation": _fixed(
        False, False, "kuota reads a worker's kubeconfig from a Secret (locationType: Secret) only"
    ),
    "ReclaimablePods": _fixed(True, True, "kuota always releases the quota of reclaimable pods"),
    "PropagateBatchJobLabelsToWorkload": _none(True, _INTERNAL, locked=True),
    "MultiKueueClusterProfile": _fixed(
        False, False, "kuota has no ClusterProfile support (multiKueue.clusterProfile)"
    ),
    "FailureRecoveryPolicy": _read(
        False,
        "read by the scheduler: on, a pod annotated kueue.x-k8s.io/safe-to-forcefully-delete "
        "stuck terminating on an unreachable node for 1 min is forcefully deleted",
    ),
    "SkipFinalizersForPodsSuspendedByParent": _none(True, _INTERNAL, locked=True),
    "MultiKueueWaitForWorkloadAdmitted": _fixed(
        True, True, "kuota's MultiKueue keeps the other copies until one is admitted", locked=True
    ),
    "MultiKueueRedoAdmissionOnEvictionInWorker": _fixed(
        True, True, "kuota's MultiKueue dispatches anew after an eviction on a worker", locked=True
    ),
    "TLSOptions": _read(True, "read by the webhook server: off ignores the tls section"),
    "RemoveFinalizersWithStrictPatch": _none(True, _INTERNAL),
    "TASReplaceNodeOnNodeTaints": _read(
        True,
        "read by the scheduler: false stops treating a node tainted NoSchedule or NoExecute "
        "as failed for the workloads that do not tolerate it for good",
    ),
    "AssignQueueLabelsForPods": _fixed(
        True, True, "kuota always labels the pods of admitted jobs with their queues"
    ),
    "TASMultiLayerTopology": _fixed(True, True, _TAS_AS_KUEUE),
    "SchedulingEquivalenceHashing": _none(True, _INTERNAL),
    "SchedulerLongRequeueInterval": _fixed(
        False, False, "kuota requeues inadmissible workloads on events, not on a timer"
    ),
    "SchedulerTimestampPreemptionBuffer": _fixed(
        False, False, "kuota's preemption compares timestamps without a buffer"
    ),
    "CustomMetricLabels": _read(
        False,
        "read by the scheduler: on, metrics.customLabels add custom_* labels to the series "
        "and copy the Workload ones from the job (docs/metrics.md#custom-labels)",
    ),
    "SparkApplicationIntegration": _none(False, _UNMANAGED),
    "MultiKueueOrchestratedPreemption": _fixed(
        False, False, "kuota's MultiKueue does not orchestrate preemptions on the workers"
    ),
    "PriorityBoost": _read(
        False, "read by the webhook (annotation rule) and the scheduler (effective priority)"
    ),
    "AdmissionGatedBy": _read(
        True, "read by the webhook (annotation rules) and the scheduler (gated admission)"
    ),
    "ShortWorkloadNames": _fixed(False, False, "kuota names Workloads as Kueue does by default"),
    "FastQuotaReleaseInPodIntegration": _fixed(
        False, False, "kuota releases a Pod's quota once it has stopped"
    ),
    "RejectUpdatesToCQWithInvalidOnFlavors": _read(
        False, "read by the webhook's ClusterQueue rules"
    ),
    "FinishOrphanedWorkloads": _fixed(
        True, True, "kuota finishes a Workload whose job is gone (OwnerNotFound)"
    ),
    "MultiKueueIncrementalDispatcherConfig": _read(
        True, "read by kuota-multikueue: off ignores incrementalDispatcherConfig.stepSize"
    ),
    "MultiKueueIncrementalDispatcherRespectConfigOrder": _read(
        True, "read by kuota-multikueue: off nominates workers in alphabetical order"
    ),
    "ConcurrentAdmission": _fixed(
        False, False, "kuota does not pursue several flavors at once (concurrentAdmissionPolicy)"
    ),
    "MetricForWorkloadCreationLatency": _read(
        True, "read by the scheduler: off drops kueue_workload_creation_latency_seconds"
    ),
    "TASRespectNodeAffinityPreferred": _fixed(
        False, False, "kuota's placement ignores preferred node affinity"
    ),
    "MultiKueueManagerQuotaAutomation": _fixed(
        False,
        False,
        "kuota does not set a MultiKueue manager's quota from its workers "
        "(MultiKueueConfig quotaManagement: Automated); set it by hand",
    ),
    "WorkloadIdentifierAnnotations": _none(True, _INTERNAL),
    "WorkloadPriorityClassDefaulting": _read(
        False, 'read by the webhook: jobs without a priority class get "default" when it exists'
    ),
    "MetricsForCohorts": _read(
        True, "read by the scheduler: off drops kueue_cohort_info and kueue_cluster_queue_info"
    ),
    "CleanupProvisioningRequestsOnEviction": _none(True, _NO_PROVISIONING),
    "TASHandleOverlappingFlavors": _none(True, _TAS_INTERNAL),
    "UnadmittedWorkloadsObservability": _fixed(
        False, False, "kuota writes Kueue's default QuotaReserved and Admitted reasons"
    ),
    "TASRecomputeAssignmentWithinSchedulingCycle": _fixed(True, True, _TAS_AS_KUEUE),
    "UnadmittedWorkloadsExplicitStatus": _fixed(
        False, False, "kuota writes Kueue's default QuotaReserved and Admitted reasons"
    ),
    "DeferRayServiceFinalizationForRedisCleanup": _none(
        True, "kuota does not hold a deleted RayService's Workload for KubeRay's Redis cleanup"
    ),
    "TASCacheNodeMatchResults": _none(True, _TAS_INTERNAL),
    "TASCachingRemainingResources": _none(True, _TAS_INTERNAL),
    "TASCacheTopologyTree": _none(False, _TAS_INTERNAL),
    "SchedulerLibraryIntegration": _fixed(
        False, False, "kuota does not integrate the scheduler library"
    ),
    "VectorizedResourceRequests": _none(True, _INTERNAL),
    "WorkloadValidateResourcesAreNonNegative": _read(True, "read by the webhook's Workload rules"),
    "TASValidateWorkloadSliceSize": _fixed(True, True, _TAS_AS_KUEUE),
    "WorkloadValidationForPodSetMetadata": _read(True, "read by the webhook's Workload rules"),
    "PrioritizePreemptorWorkloads": _fixed(
        False, False, "kuota does not prioritize workloads waiting for their preemptions"
    ),
    "LWSImmutableGroupSize": _none(True, _AS_DEFAULT),
    "FlavorFungibilityPreserveScanProgress": _read(
        True, "read by the scheduler: off restarts the flavor scan after every change"
    ),
    "SkipAncestorCheckForDeletedWorkloads": _fixed(
        True, True, "kuota's webhook leaves objects being deleted alone"
    ),
    "MultiKueueRemoteSpecSync": _none(
        True, "kuota's MultiKueue dispatches batch Jobs only (no RayService to sync)"
    ),
    "RecomputeAssignmentUponPreemptionTargetsOverlap": _fixed(
        False, False, "kuota does not recompute assignments when preemption targets overlap"
    ),
    "PodIntegrationValidateGroupOwner": _none(True, _INTERNAL),
    "ValidateRayAndSparkJobUpdates": _none(True, _AS_DEFAULT),
}
"""Every feature gate of Kueue v0.19.2 (its ``pkg/features``), with kuota's stance."""

REMOVED_GATES: Final = frozenset(
    {
        "ProvisioningACC",
        "LendingLimit",
        "MultiKueueBatchJobWithManagedBy",
        "MultiplePreemptions",
        "ConfigurableResourceTransformations",
        "WorkloadResourceRequestsSummary",
        "ExposeFlavorsInLocalQueue",
        "AdmissionCheckValidationRules",
        "KeepQuotaForProvReqRetry",
        "ManagedJobsNamespaceSelector",
        "LocalQueueDefaulting",
        "TASProfileMostFreeCapacity",
        "TASProfileLeastFreeCapacity",
        "FlavorFungibilityImplicitPreferenceDefault",
        "SanitizePodSets",
        "DynamicResourceAllocation",
        "QueueVisibility",
    }
)
"""Gates of earlier Kueue versions that kuota still accepts in a file (no effect)."""

KNOWN_FEATURE_GATES: Final = frozenset(GATES) | REMOVED_GATES

REFUSED: Final = "CFG-K"
"""The rule id of kuota's own Configuration checks: what kuota refuses to start with."""


def kuota_default(name: str) -> bool:
    """The value kuota uses for a gate the file does not set: pure.

    Kueue's default, except where kuota behaves otherwise (``fixed``).
    """
    gate = GATES.get(name)
    if gate is None:
        return False
    if gate.behaves_as is not None:
        return gate.behaves_as
    return gate.kueue_default


def enabled(gates: Mapping[str, bool], name: str) -> bool:
    """Whether a gate is on: the file's value, else kuota's default: pure."""
    value = gates.get(name)
    return value if isinstance(value, bool) else kuota_default(name)


def _on_off(value: bool) -> str:
    return "true" if value else "false"


def judge(gates: Mapping[str, object]) -> tuple[list[FieldError], list[str]]:
    """The errors and warnings of one file's ``featureGates`` (module docstring): pure.

    Unknown names are left to CFG-19; values that are not booleans to the type pass.
    """
    errors: list[FieldError] = []
    warnings: list[str] = []
    for name, value in gates.items():
        if not isinstance(value, bool):
            continue
        at = FieldPath(("featureGates",)).key(name)
        if name in REMOVED_GATES:
            warnings.append(f"{at}: not a feature gate of Kueue v0.19; no effect")
            continue
        gate = GATES.get(name)
        if gate is None:
            continue
        if gate.locked and value != gate.kueue_default:
            errors.append(
                error(
                    at,
                    f"cannot be set to {_on_off(value)}: Kueue v0.19 locks it to "
                    f"{_on_off(gate.kueue_default)}",
                    origin="K",
                    rule=REFUSED,
                )
            )
        elif gate.read:
            continue
        elif gate.behaves_as is None:
            warnings.append(f"{at}: {gate.note}: no effect")
        elif value == gate.behaves_as:
            continue
        elif value == gate.kueue_default:
            warnings.append(
                f"{at}: {gate.note}: kuota behaves as {name}={_on_off(gate.behaves_as)}, "
                "unlike Kueue's default"
            )
        else:
            errors.append(
                error(
                    at,
                    f"kuota cannot {'enable' if value else 'disable'} this: {gate.note}; "
                    f"remove it (kuota behaves as {name}={_on_off(gate.behaves_as)})",
                    origin="K",
                    rule=REFUSED,
                )
            )
    return errors, warnings
