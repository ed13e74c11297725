"""Schema of the Workload kind in every version it is served in.

A Workload carries pod templates, which are Kubernetes ``PodTemplateSpec``s:
kuota keeps them free-form (``x-kubernetes-preserve-unknown-fields``) instead
of copying the whole core/v1 pod schema, because the webhook validates what
kuota reads from them (containers, requests, node selectors, tolerations) and
everything else must round-trip untouched.  Topology-aware scheduling data is
kept free-form too: kuota stores it without interpreting it (docs/concepts.md#pod-sets).
"""

from __future__ import annotations

from dataclasses import replace

from scheduler.api.crds import cel_workload as cel
from scheduler.api.crds.definition import (
    AGE,
    KindDefinition,
    PrinterColumn,
    VersionDefinition,
    condition_status_column,
)
from scheduler.api.crds.nodes import Cel, Leaf, Node, ObjectNode, with_cel
from scheduler.api.crds.schema_kit import (
    array,
    boolean,
    conditions,
    enum,
    free_form,
    int32,
    known,
    list_map,
    obj,
    quantity_map,
    renamed,
    string,
    string_map,
    timestamp,
    toleration,
    top_level,
    unchecked,
)
from scheduler.api.refs import HUB_VERSION


def _pod_template() -> Node:
    """The pod template: free-form for the API server; the webhook types what kuota reads."""
    resources = known({"requests": quantity_map(), "limits": quantity_map()})
    container = known({"resources": resources})
    typed = known(
        {
            "metadata": known({"labels": string_map(), "annotations": string_map()}),
            "spec": known(
                {
                    "containers": array(container),
                    "initContainers": array(container),
                    "resources": resources,
                    "tolerations": array(unchecked(toleration())),
                    "nodeSelector": string_map(),
                }
            ),
        }
    )
    return free_form("Pod template (core/v1 PodTemplateSpec) of the pods.", typed=typed)


def _bounded(node: Leaf, length: int, *rules: Cel) -> Leaf:
    """A string with a ``maxLength`` (bounds CEL's cost estimate) and CEL rules."""
    return with_cel(replace(node, max_length=length), *rules)


def _pod_set() -> ObjectNode:
    node = obj(
        {
            "name": _bounded(
                string("Pod set name, a DNS-1123 label.", default="main"),
                cel.LABEL_LENGTH,
                cel.POD_SET_NAME,
            ),
            "template": _pod_template(),
            "count": int32("Number of pods.", default=1),
            "minCount": int32("Smallest count accepted under partial admission."),
            "topologyRequest": free_form("Topology-aware scheduling request; kept as is."),
        },
        required=["template"],
        foreign={"spec": renamed("spec", "v1alpha1", "template.spec")},
    )
    return with_cel(node, cel.COUNT, cel.MIN_COUNT, cel.MIN_COUNT_WITHIN_COUNT)


def _priority_fields(version: str) -> dict[str, Node]:
    if version == "v1beta1":
        return {
            "priorityClassName": string("Name of the priority class the priority came from."),
            "priorityClassSource": enum(
                ["kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass", ""],
                "Kind of priority class named by priorityClassName.",
            ),
        }
    reference = obj(
        {
            "group": enum(["kueue.x-k8s.io", "scheduling.k8s.io"]),
            "kind": enum(["WorkloadPriorityClass", "PriorityClass"]),
            "name": _bounded(string(), cel.SUBDOMAIN_LENGTH, cel.PRIORITY_CLASS_NAME),
        },
        "Where priority came from.",
        required=["group", "kind", "name"],
    )
    return {"priorityClassRef": with_cel(reference, cel.KIND_OF_GROUP)}


_SPEC_HINTS = {
    "priorityClassName": renamed(
        "priorityClassName", "v1beta1/v1alpha1", "spec.priorityClassRef.name"
    ),
    "priorityClassSource": renamed(
        "priorityClassSource", "v1beta1", "spec.priorityClassRef.group and .kind"
    ),
    "admission": renamed("admission", "v1alpha1", "status.admission"),
}


def _spec(version: str) -> ObjectNode:
    pod_sets = list_map(_pod_set(), ["name"], "Groups of identical pods.")
    fields: dict[str, Node] = {
        "podSets": with_cel(replace(pod_sets, max_items=cel.MAX_POD_SETS), cel.ONE_MIN_COUNT),
        "queueName": _bounded(
            string("LocalQueue in the same namespace."), cel.SUBDOMAIN_LENGTH, cel.QUEUE_NAME
        ),
    }
    fields.update(_priority_fields(version))
    fields.update(
        {
            "priority": int32("Higher is more important; absent means 0."),
            "active": boolean("false = never admit, evict if admitted.", default=True),
            "maximumExecutionTimeSeconds": with_cel(
                int32("Deactivate after this long admitted."), cel.EXECUTION_TIME
            ),
            "preemptionGates": replace(
                list_map(
                    with_cel(obj({"name": string()}, required=["name"]), cel.GATE_NAME), ["name"]
                ),
                max_items=cel.MAX_PREEMPTION_GATES,
            ),
        }
    )
    spec = obj(fields, foreign=_SPEC_HINTS if version == HUB_VERSION else None)
    if version == HUB_VERSION:
        return with_cel(spec, cel.POD_SETS_LISTED, cel.PRIORITY_WITH_CLASS)
    return with_cel(spec, cel.POD_SETS_LISTED)


def _admission() -> ObjectNode:
    assignment = obj(
        {
            "name": string("Pod set name.", default="main"),
            "flavors": string_map("Flavor chosen for each resource."),
            "resourceUsage": quantity_map("Total usage of the pod set."),
            "count": int32("Pods counted at admission."),
            "topologyAssignment": free_form("Topology-aware scheduling; kept as is."),
            "delayedTopologyRequest": enum(["Pending", "Ready"]),
        }
    )
    return obj(
        {
            "clusterQueue": string("ClusterQueue that reserved the quota."),
            "podSetAssignments": list_map(assignment, ["name"]),
        },
        "Quota reservation; set by the scheduler.",
    )


def _admission_check_state() -> ObjectNode:
    update = obj(
        {
            "name": string(),
            "labels": string_map(),
            "annotations": string_map(),
            "nodeSelector": string_map(),
            "tolerations": array(toleration()),
        },
        required=["name"],
    )
    return obj(
        {
            "name": string(),
            "state": enum(["Pending", "Ready", "Retry", "Rejected"]),
            "lastTransitionTime": timestamp(),
            "message": string(),
            "requeueAfterSeconds": int32(),
            "retryCount": int32(),
            "podSetUpdates": list_map(update, ["name"]),
        },
        required=["name", "state"],
    )


_STATUS_HINTS = {
    "accumulatedPastExexcutionTimeSeconds": renamed(
        "accumulatedPastExexcutionTimeSeconds",
        "v1beta1",
        "status.accumulatedPastExecutionTimeSeconds",
    )
}


def _status(version: str) -> ObjectNode:
    accumulated = (
        "accumulatedPastExexcutionTimeSeconds"
        if version == "v1beta1"
        else "accumulatedPastExecutionTimeSeconds"
    )
    eviction = obj(
        {"reason": string(), "underlyingCause": string(), "count": int32()},
        required=["reason", "underlyingCause", "count"],
    )
    named = obj({"name": string()}, required=["name"])
    status = obj(
        {
            "conditions": replace(conditions(), max_items=cel.MAX_CONDITIONS),
            "admission": _admission(),
            "requeueState": unchecked(obj({"count": int32(), "requeueAt": timestamp()})),
            "reclaimablePods": list_map(
                obj({"name": string(), "count": int32()}, required=["name", "count"]), ["name"]
            ),
            "admissionChecks": list_map(_admission_check_state(), ["name"]),
            "resourceRequests": unchecked(
                list_map(
                    obj({"name": string(), "resources": quantity_map()}, required=["name"]),
                    ["name"],
                )
            ),
            accumulated: int32("Seconds admitted in earlier admit/evict cycles."),
            "schedulingStats": unchecked(
                obj({"evictions": list_map(eviction, ["reason", "underlyingCause"])})
            ),
            "nominatedClusterNames": replace(
                array(replace(string(), max_length=cel.MAX_CLUSTER_NAME)),
                max_items=cel.MAX_NOMINATED_CLUSTERS,
            ),
            "clusterName": replace(string(), max_length=cel.MAX_CLUSTER_NAME),
            "unhealthyNodes": unchecked(list_map(named, ["name"])),
            "preemptionGates": unchecked(
                list_map(
                    obj(
                        {
                            "name": string(),
                            "position": enum(["Closed", "Open"]),
                            "lastTransitionTime": timestamp(),
                        },
                        required=["name", "position"],
                    ),
                    ["name"],
                )
            ),
        },
        foreign=_STATUS_HINTS if version == HUB_VERSION else None,
    )
    return with_cel(status, cel.CLUSTER_EXCLUSIVE, cel.CLUSTER_NAME_KEPT)


def _whole(version: str, root: ObjectNode) -> ObjectNode:
    """The root, with the update rules that compare the stored object (v1beta2 only)."""
    return with_cel(root, *cel.WHILE_RESERVED) if version == HUB_VERSION else root


def _legacy(version: str) -> ObjectNode:
    pod_set = obj(
        {
            "name": string("Pod set name; a single unnamed pod set is called main."),
            "count": int32(),
            "spec": free_form("Pod spec (core/v1 PodSpec)."),
        },
        required=["spec"],
    )
    admission = obj(
        {
            "clusterQueue": string(),
            "podSetFlavors": array(obj({"name": string(), "flavors": string_map()})),
        }
    )
    spec = obj(
        {
            "queueName": string(),
            "priorityClassName": string("A scheduling.k8s.io PriorityClass."),
            "priority": int32(),
            "podSets": array(pod_set),
            "admission": admission,
        }
    )
    return top_level(
        {"spec": spec, "status": obj({"conditions": conditions()})},
        f"Workload, legacy {version} form (admission in spec).",
    )


def workload() -> KindDefinition:
    """Pure: the Workload CRD (docs/concepts.md#workload)."""
    description = "Workload is the unit of admission: pod sets that are admitted together."
    queue = PrinterColumn("Queue", ".spec.queueName", "string", "LocalQueue of the workload.")
    current_columns = (
        queue,
        PrinterColumn(
            "Admitted by",
            ".status.admission.clusterQueue",
            "string",
            "ClusterQueue that reserved quota for (admitted) the workload.",
        ),
        condition_status_column("Admitted", "Admitted", "Admission status."),
        condition_status_column("Finished", "Finished", "Workload finished."),
        AGE,
    )
    legacy_columns = (
        queue,
        PrinterColumn(
            "Admitted by", ".spec.admission.clusterQueue", "string", "ClusterQueue that admitted."
        ),
        AGE,
    )

    def current(version: str) -> VersionDefinition:
        return VersionDefinition(
            version,
            _whole(
                version,
                top_level(
                    {"spec": _spec(version), "status": _status(version)},
                    description,
                    checked_status=True,
                ),
            ),
            current_columns,
            status_subresource=True,
            selectable_fields=(".status.admission.clusterQueue",),
        )

    return KindDefinition(
        kind="Workload",
        plural="workloads",
        scope="Namespaced",
        # Kueue's short names, plus `wl` (kuota: `kubectl get wl`).
        short_names=("kwl", "kueueworkload", "kueueworkloads", "wl"),
        versions=(
            VersionDefinition("v1alpha1", _legacy("v1alpha1"), legacy_columns, True),
            VersionDefinition("v1alpha2", _legacy("v1alpha2"), legacy_columns, True),
            current("v1beta1"),
            current("v1beta2"),
        ),
    )
