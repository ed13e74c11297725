"""Schemas of the quota kinds: ResourceFlavor, ClusterQueue, Cohort, LocalQueue.

Each function returns the :class:`KindDefinition` of one kind with every
version it is served in (docs/concepts.md for ``v1beta2``;
docs/api-differences.md#legacy-versions-and-conversion for ``v1beta1`` and the
legacy ``v1alpha1``/``v1alpha2`` shapes).  Schema defaults are exactly those of
docs/validation.md#defaulting, so that an object written while the webhook is
unreachable still gets them.
"""

from __future__ import annotations

from dataclasses import replace

from scheduler.api.crds import cel_other as cel
from scheduler.api.crds.definition import (
    AGE,
    KindDefinition,
    PrinterColumn,
    VersionDefinition,
)
from scheduler.api.crds.nodes import ListNode, Node, ObjectNode, with_cel
from scheduler.api.crds.schema_kit import (
    QUEUEING_STRATEGY,
    array,
    conditions,
    enum,
    fair_sharing,
    fair_sharing_status,
    flavor_usage,
    hint,
    int32,
    int64,
    label_selector,
    list_map,
    obj,
    quantity,
    quantity_map,
    renamed,
    resource_groups,
    stop_policy,
    string,
    string_map,
    string_set,
    taint,
    timestamp,
    toleration,
    top_level,
    unchecked,
)
from scheduler.api.refs import HUB_VERSION

# --- ResourceFlavor ----------------------------------------------------------


def _flavor_v1beta(description: str) -> ObjectNode:
    spec = obj(
        {
            "nodeLabels": string_map("Labels of the nodes that provide this flavor."),
            "nodeTaints": array(taint(), "Taints a pod set must tolerate to get this flavor."),
            "tolerations": array(toleration(), "Tolerations added to admitted pods."),
            "topologyName": string("Name of a Topology; immutable once set."),
        },
        "An empty spec describes an empty flavor (homogeneous cluster).",
    )
    foreign = {
        "labels": renamed("labels", "v1alpha1", "spec.nodeLabels"),
        "taints": renamed("taints", "v1alpha1/v1alpha2", "spec.nodeTaints"),
    }
    return top_level({"spec": spec}, description, foreign=foreign)


def _flavor_legacy(version: str) -> ObjectNode:
    fields: dict[str, Node] = {}
    if version == "v1alpha1":
        fields["labels"] = string_map("Node labels of the flavor (top level in v1alpha1).")
    else:
        fields["nodeSelector"] = string_map(
            "Node labels (late v1alpha2); otherwise metadata.labels are the node labels."
        )
    fields["taints"] = array(taint(), "Taints of the flavor (top level).")
    return top_level(fields, f"ResourceFlavor, legacy {version} form.")


def resource_flavor() -> KindDefinition:
    """Pure: the ResourceFlavor CRD (docs/concepts.md#resourceflavor)."""
    description = "ResourceFlavor describes a kind of node resources (labels, taints)."
    return KindDefinition(
        kind="ResourceFlavor",
        plural="resourceflavors",
        scope="Cluster",
        short_names=("flavor", "flavors", "rf"),
        versions=(
            VersionDefinition("v1alpha1", _flavor_legacy("v1alpha1"), (AGE,)),
            VersionDefinition("v1alpha2", _flavor_legacy("v1alpha2"), (AGE,)),
            VersionDefinition("v1beta1", _flavor_v1beta(description), (AGE,)),
            VersionDefinition("v1beta2", _flavor_v1beta(description), (AGE,)),
        ),
    )


# --- ClusterQueue ------------------------------------------------------------


def _flavor_fungibility(version: str) -> ObjectNode:
    borrow_values = ["MayStopSearch", "TryNextFlavor"]
    preempt_values = ["MayStopSearch", "TryNextFlavor"]
    if version == "v1beta1":
        borrow_values = ["Borrow", *borrow_values]
        preempt_values = ["Preempt", *preempt_values]
    return obj(
        {
            "whenCanBorrow": enum(
                borrow_values,
                "What to do when a flavor fits only by borrowing.",
                default="MayStopSearch",
                empty_means_default=True,
            ),
            "whenCanPreempt": enum(
                preempt_values,
                "What to do when a flavor fits only by preempting.",
                default="TryNextFlavor",
                empty_means_default=True,
            ),
            "preference": enum(["BorrowingOverPreemption", "PreemptionOverBorrowing"]),
        },
        "How the scheduler moves on to the next flavor.",
        default={},
    )


def _preemption() -> ObjectNode:
    borrow_within_cohort = obj(
        {
            "policy": enum(["Never", "LowerPriority"], default="Never", empty_means_default=True),
            # Its type and range are checked by CQ-29, with the rule's own message.
            "maxPriorityThreshold": unchecked(int32()),
        },
        default={},
    )
    return obj(
        {
            "withinClusterQueue": enum(
                ["Never", "LowerPriority", "LowerOrNewerEqualPriority"],
                default="Never",
                empty_means_default=True,
            ),
            "reclaimWithinCohort": enum(
                ["Never", "LowerPriority", "Any"], default="Never", empty_means_default=True
            ),
            "borrowWithinCohort": borrow_within_cohort,
        },
        "When pending workloads may evict admitted ones.",
        default={},
    )


def _admission_checks_strategy() -> ObjectNode:
    rule = obj(
        {
            "name": string("Name of an AdmissionCheck."),
            "onFlavors": string_set("Flavors the check applies to; empty = all."),
        },
        required=["name"],
    )
    return obj(
        {"admissionChecks": list_map(rule, ["name"])},
        "Admission checks every workload of this queue must pass.",
        required=["admissionChecks"],
    )


_CLUSTER_QUEUE_SPEC_HINTS = {
    "cohort": hint("CQ-V1", 'unknown field "cohort"; v1beta2 calls it spec.cohortName'),
    "admissionChecks": hint(
        "CQ-V2",
        'unknown field "admissionChecks"; in v1beta2 list the checks under '
        "spec.admissionChecksStrategy.admissionChecks[].name",
    ),
    "resources": hint(
        "CQ-V4",
        'unknown field "resources"; v1beta2 ClusterQueues use spec.resourceGroups (see '
        'kuota\'s docs/api-differences.md, "Legacy versions and conversion")',
    ),
}


def _cluster_queue_spec(version: str) -> ObjectNode:
    fields: dict[str, Node] = {
        "resourceGroups": resource_groups(),
        ("cohort" if version == "v1beta1" else "cohortName"): string(
            "Cohort this queue borrows from and lends to."
        ),
        "queueingStrategy": enum(
            QUEUEING_STRATEGY,
            "Order and blocking of pending workloads.",
            default="BestEffortFIFO",
            empty_means_default=True,
        ),
        "namespaceSelector": label_selector(
            "Namespaces whose workloads may be admitted; absent = none, {} = all."
        ),
        "flavorFungibility": _flavor_fungibility(version),
        "preemption": _preemption(),
    }
    if version == "v1beta1":
        fields["admissionChecks"] = array(string(), "Names of admission checks.")
    fields.update(
        {
            "admissionChecksStrategy": _admission_checks_strategy(),
            "stopPolicy": stop_policy(),
            "fairSharing": fair_sharing(),
            "admissionScope": obj(
                {
                    "admissionMode": enum(
                        ["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"]
                    )
                },
                required=["admissionMode"],
            ),
            "concurrentAdmissionPolicy": obj(
                {
                    "migration": obj(
                        {
                            "mode": enum(["TryPreferredFlavors", "RetainFirstAdmission"]),
                            "constraints": obj({"lastAcceptableFlavorName": string()}),
                        },
                        required=["mode"],
                    )
                },
                "Alpha; stored but not acted on by kuota. Immutable.",
            ),
        }
    )
    return obj(fields, foreign=_CLUSTER_QUEUE_SPEC_HINTS if version == HUB_VERSION else None)


def _cluster_queue_status(version: str) -> ObjectNode:
    fields: dict[str, Node] = {
        "conditions": conditions(),
        "flavorsReservation": flavor_usage(),
        "flavorsUsage": flavor_usage(),
        "pendingWorkloads": int32("Workloads waiting for quota."),
        "reservingWorkloads": int32("Workloads holding a quota reservation."),
        "admittedWorkloads": int32("Workloads admitted and not finished."),
        "fairSharing": fair_sharing_status(),
    }
    if version == "v1beta1":
        pending = obj({"name": string(), "namespace": string()}, required=["name", "namespace"])
        fields["pendingWorkloadsStatus"] = obj(
            {
                "clusterQueuePendingWorkload": array(pending),
                "lastChangeTime": timestamp(),
            },
            required=["lastChangeTime"],
        )
    return obj(fields)


def _cluster_queue_legacy(version: str) -> ObjectNode:
    flavor = obj(
        {
            "name": string("Name of a ResourceFlavor.", default="default"),
            "quota": obj(
                {
                    "min": quantity("Quota owned by this queue.", default=0),
                    "max": quantity("Upper bound of own plus borrowed usage."),
                },
            ),
        },
        required=["quota"],
    )
    resource = obj(
        {"name": string("Resource name."), "flavors": list_map(flavor, ["name"])},
        required=["name", "flavors"],
    )
    spec_fields: dict[str, Node] = {
        "namespaceSelector": label_selector(),
        "cohort": string(),
        "queueingStrategy": enum(
            QUEUEING_STRATEGY, default="BestEffortFIFO", empty_means_default=True
        ),
        "resources": list_map(resource, ["name"]),
    }
    if version == "v1alpha2":
        spec_fields["preemption"] = obj(
            {
                "reclaimWithinCohort": enum(["Never", "LowerPriority", "Any"]),
                "withinClusterQueue": enum(["Never", "LowerPriority"]),
            },
            "Late (unreleased) v1alpha2 preemption settings.",
        )
    usage = obj({"total": quantity(), "borrowing": quantity()})
    status = obj(
        {
            "usedResources": string_map(
                "Usage by resource, then by flavor.", values=string_map(values=usage)
            ),
            "pendingWorkloads": int32(),
            "admittedWorkloads": int32(),
        }
    )
    return top_level(
        {"spec": obj(spec_fields), "status": status},
        f"ClusterQueue, legacy {version} form (quota.min/max).",
    )


def _cluster_queue_columns(cohort_field: str) -> tuple[PrinterColumn, ...]:
    return (
        PrinterColumn("Cohort", f".spec.{cohort_field}", "string", "Cohort of the queue."),
        # Strategy and Admitted are wide-only in Kueue; kuota shows them by default so
        # that `kubectl get cq` answers both (docs/api-differences.md#kuota-decisions).
        PrinterColumn("Strategy", ".spec.queueingStrategy", "string", "Queueing strategy."),
        PrinterColumn(
            "Pending Workloads", ".status.pendingWorkloads", "integer", "Workloads waiting."
        ),
        PrinterColumn(
            "Admitted Workloads",
            ".status.admittedWorkloads",
            "integer",
            "Workloads admitted and not finished.",
        ),
        AGE,
    )


def cluster_queue() -> KindDefinition:
    """Pure: the ClusterQueue CRD (docs/concepts.md#clusterqueue)."""
    description = "ClusterQueue holds quota by flavor and admits workloads of its LocalQueues."

    def current(version: str) -> ObjectNode:
        return top_level(
            {"spec": _cluster_queue_spec(version), "status": _cluster_queue_status(version)},
            description,
        )

    legacy_columns = _cluster_queue_columns("cohort")
    return KindDefinition(
        kind="ClusterQueue",
        plural="clusterqueues",
        scope="Cluster",
        short_names=("cq",),
        versions=(
            VersionDefinition("v1alpha1", _cluster_queue_legacy("v1alpha1"), legacy_columns, True),
            VersionDefinition("v1alpha2", _cluster_queue_legacy("v1alpha2"), legacy_columns, True),
            VersionDefinition(
                "v1beta1", current("v1beta1"), _cluster_queue_columns("cohort"), True
            ),
            VersionDefinition(
                "v1beta2", current("v1beta2"), _cluster_queue_columns("cohortName"), True
            ),
        ),
    )


# --- Cohort ------------------------------------------------------------------


def cohort() -> KindDefinition:
    """Pure: the Cohort CRD (docs/concepts.md#cohort); served in v1beta1 and v1beta2 only."""
    schema = top_level(
        {
            "spec": obj(
                {
                    "parentName": string("Parent cohort; absent = root of a cohort tree."),
                    "resourceGroups": resource_groups(),
                    "fairSharing": fair_sharing(),
                },
                foreign={"parent": renamed("parent", "v1alpha1", "spec.parentName")},
            ),
            "status": obj({"fairSharing": fair_sharing_status()}),
        },
        "Cohort groups ClusterQueues and Cohorts that share quota.",
    )
    return KindDefinition(
        kind="Cohort",
        plural="cohorts",
        scope="Cluster",
        short_names=("co",),
        versions=(
            VersionDefinition("v1beta1", schema, status_subresource=True),
            VersionDefinition("v1beta2", schema, status_subresource=True),
        ),
    )


# --- LocalQueue --------------------------------------------------------------


def _local_queue_usage() -> ListNode:
    return flavor_usage(with_borrowed=False)


def _local_queue_status(version: str) -> ObjectNode:
    fields: dict[str, Node] = {
        "conditions": conditions(),
        "pendingWorkloads": int32("Workloads of this queue waiting for quota."),
        "reservingWorkloads": int32("Workloads of this queue holding quota."),
        "admittedWorkloads": int32("Workloads of this queue admitted."),
        "flavorsReservation": _local_queue_usage(),
        ("flavorUsage" if version == "v1beta1" else "flavorsUsage"): _local_queue_usage(),
        "fairSharing": obj(
            {
                "weightedShare": int64(),
                "admissionFairSharingStatus": obj(
                    {
                        "consumedResources": quantity_map("Decayed historical usage."),
                        "lastUpdate": timestamp(),
                    },
                    required=["consumedResources", "lastUpdate"],
                ),
            },
            required=["weightedShare"],
        ),
    }
    if version == "v1beta1":
        flavor = obj(
            {
                "name": string(),
                "resources": string_set(),
                "nodeLabels": string_map(),
                "nodeTaints": array(taint()),
                "topology": obj(
                    {"name": string(), "levels": array(string())},
                    required=["name", "levels"],
                ),
            },
            required=["name"],
        )
        fields["flavors"] = list_map(flavor, ["name"], "Deprecated: flavors of the ClusterQueue.")
    return obj(fields)


def _local_queue(version: str) -> ObjectNode:
    description = "LocalQueue is the namespaced entry point that points to a ClusterQueue."
    spec_fields: dict[str, Node] = {
        "clusterQueue": string("ClusterQueue admitting this queue's workloads; immutable.")
    }
    if version in ("v1alpha1", "v1alpha2"):
        status = obj({"pendingWorkloads": int32()})
        return top_level(
            {"spec": obj(spec_fields), "status": status}, f"{description} Legacy {version} form."
        )
    spec_fields["stopPolicy"] = stop_policy()
    spec_fields["fairSharing"] = fair_sharing()
    if version == HUB_VERSION:
        spec_fields["clusterQueue"] = with_cel(
            replace(string(spec_fields["clusterQueue"].description), max_length=cel.NAME_LENGTH),
            cel.CLUSTER_QUEUE_NAME,
        )
    root = top_level(
        {"spec": obj(spec_fields), "status": _local_queue_status(version)}, description
    )
    return with_cel(root, cel.CLUSTER_QUEUE_KEPT) if version == HUB_VERSION else root


def local_queue() -> KindDefinition:
    """Pure: the LocalQueue CRD (docs/concepts.md#localqueue)."""
    cluster_queue_column = PrinterColumn(
        "ClusterQueue", ".spec.clusterQueue", "string", "Backing ClusterQueue."
    )
    pending = PrinterColumn(
        "Pending Workloads", ".status.pendingWorkloads", "integer", "Workloads waiting."
    )
    admitted = PrinterColumn(
        "Admitted Workloads", ".status.admittedWorkloads", "integer", "Workloads admitted."
    )
    legacy_columns = (cluster_queue_column, pending, AGE)
    columns = (cluster_queue_column, pending, admitted, AGE)
    return KindDefinition(
        kind="LocalQueue",
        plural="localqueues",
        scope="Namespaced",
        short_names=("queue", "queues", "lq"),
        versions=(
            VersionDefinition("v1alpha1", _local_queue("v1alpha1"), legacy_columns, True),
            VersionDefinition("v1alpha2", _local_queue("v1alpha2"), legacy_columns, True),
            VersionDefinition("v1beta1", _local_queue("v1beta1"), columns, True),
            VersionDefinition("v1beta2", _local_queue("v1beta2"), columns, True),
        ),
    )
