"""Schemas of the supporting kinds kuota stores and validates.

WorkloadPriorityClass, AdmissionCheck, MultiKueueConfig and MultiKueueCluster,
and Topology (docs/concepts.md describes each).  None of them existed in Kueue's
``v1alpha1``/``v1alpha2`` form that kuota accepts, so each is served as
``v1beta1`` and ``v1beta2`` only.
"""

from __future__ import annotations

from scheduler.api.crds import cel_other as cel
from scheduler.api.crds.definition import (
    AGE,
    KindDefinition,
    PrinterColumn,
    VersionDefinition,
    condition_status_column,
)
from scheduler.api.crds.nodes import Node, ObjectNode, with_cel
from scheduler.api.crds.schema_kit import (
    array,
    conditions,
    enum,
    hint,
    int32,
    int64,
    obj,
    renamed,
    string,
    string_set,
    top_level,
    unchecked,
)
from scheduler.api.refs import HUB_VERSION


def workload_priority_class() -> KindDefinition:
    """Pure: the WorkloadPriorityClass CRD; its fields are top level (no spec)."""
    schema = top_level(
        {
            # Its type and range are checked by WPC-2, with the rule's own message.
            "value": unchecked(
                int32("Priority given to workloads of jobs labelled with this class.")
            ),
            "description": string("Free text, at most 2048 characters."),
        },
        "WorkloadPriorityClass gives a priority to workloads independently of pod priority.",
        required=["value"],
    )
    columns = (PrinterColumn("Value", ".value", "integer", "Priority value."), AGE)
    return KindDefinition(
        kind="WorkloadPriorityClass",
        plural="workloadpriorityclasses",
        scope="Cluster",
        short_names=("wpc",),
        versions=(
            VersionDefinition("v1beta1", schema, columns),
            VersionDefinition("v1beta2", schema, columns),
        ),
    )


def _admission_check(version: str) -> ObjectNode:
    spec_fields: dict[str, Node] = {
        "controllerName": string("Controller that decides this check; immutable."),
        "parameters": obj(
            {"apiGroup": string(), "kind": string(), "name": string()},
            "Object holding the check's parameters.",
            required=["apiGroup", "kind", "name"],
        ),
    }
    if version == "v1beta1":
        spec_fields["retryDelayMinutes"] = int64("Deprecated; dropped in v1beta2.")
    retry_hint = hint(
        "UNKNOWN-FIELD",
        'unknown field "retryDelayMinutes"; this v1beta1 field was removed in v1beta2',
    )
    foreign = {"retryDelayMinutes": retry_hint} if version == HUB_VERSION else None
    spec = obj(spec_fields, required=["controllerName"], foreign=foreign)
    root = top_level(
        {
            "spec": spec
            if version != HUB_VERSION
            else with_cel(spec, cel.CONTROLLER_SET, cel.CONTROLLER_LENGTH),
            "status": obj({"conditions": conditions()}),
        },
        "AdmissionCheck is a gate a workload must pass after reserving quota.",
    )
    return root if version != HUB_VERSION else with_cel(root, cel.CONTROLLER_KEPT)


def admission_check() -> KindDefinition:
    """Pure: the AdmissionCheck CRD (docs/concepts.md#admission-checks)."""
    columns = (
        PrinterColumn("Controller", ".spec.controllerName", "string", "Check controller."),
        condition_status_column("Active", "Active", "Whether the check is active."),
        AGE,
    )
    return KindDefinition(
        kind="AdmissionCheck",
        plural="admissionchecks",
        scope="Cluster",
        short_names=("ac",),
        versions=(
            VersionDefinition("v1beta1", _admission_check("v1beta1"), columns, True),
            VersionDefinition("v1beta2", _admission_check("v1beta2"), columns, True),
        ),
    )


def _multikueue_config(version: str) -> ObjectNode:
    spec_fields: dict[str, Node] = {
        "clusters": string_set("MultiKueueCluster names, in order of preference."),
    }
    if version == "v1beta2":
        spec_fields["quotaManagement"] = enum(["Manual", "Automated"])
    return top_level(
        {"spec": obj(spec_fields, required=["clusters"])},
        "MultiKueueConfig lists the worker clusters of a MultiKueue admission check.",
    )


def multikueue_config() -> KindDefinition:
    """Pure: the MultiKueueConfig CRD (docs/concepts.md#multikueue)."""
    return KindDefinition(
        kind="MultiKueueConfig",
        plural="multikueueconfigs",
        scope="Cluster",
        short_names=("mkconf",),
        versions=(
            VersionDefinition("v1beta1", _multikueue_config("v1beta1")),
            VersionDefinition("v1beta2", _multikueue_config("v1beta2")),
        ),
    )


def _multikueue_cluster(version: str) -> ObjectNode:
    sources: dict[str, Node] = {
        "kubeConfig": obj(
            {
                "location": string("Secret name or file path of the kubeconfig."),
                "locationType": enum(
                    ["Secret", "Path"], default="Secret", empty_means_default=True
                ),
            },
            required=["location"],
        ),
        "clusterProfileRef": obj({"name": string()}, required=["name"]),
    }
    if version == "v1beta1":
        spec = obj(sources)
    else:
        spec = obj(
            {"clusterSource": obj(sources, "Exactly one of kubeConfig, clusterProfileRef.")},
            required=["clusterSource"],
            foreign={
                "kubeConfig": renamed("kubeConfig", "v1beta1", "spec.clusterSource.kubeConfig"),
                "clusterProfileRef": renamed(
                    "clusterProfileRef", "v1beta1", "spec.clusterSource.clusterProfileRef"
                ),
            },
        )
    return top_level(
        {"spec": spec, "status": obj({"conditions": conditions()})},
        "MultiKueueCluster is a worker cluster MultiKueue may dispatch to.",
    )


def multikueue_cluster() -> KindDefinition:
    """Pure: the MultiKueueCluster CRD (docs/concepts.md#multikueue)."""
    columns = (condition_status_column("Connected", "Active", "Worker reachable."), AGE)
    return KindDefinition(
        kind="MultiKueueCluster",
        plural="multikueueclusters",
        scope="Cluster",
        short_names=("mkc",),
        versions=(
            VersionDefinition("v1beta1", _multikueue_cluster("v1beta1"), columns, True),
            VersionDefinition("v1beta2", _multikueue_cluster("v1beta2"), columns, True),
        ),
    )


def topology() -> KindDefinition:
    """Pure: the Topology CRD (docs/concepts.md#topology-aware-scheduling)."""
    level = obj({"nodeLabel": string("Node label key of this level.")}, required=["nodeLabel"])
    schema = top_level(
        {"spec": obj({"levels": array(level, "Levels, widest first.")}, required=["levels"])},
        "Topology names the node labels of a data-centre hierarchy.",
    )
    return KindDefinition(
        kind="Topology",
        plural="topologies",
        scope="Cluster",
        short_names=("topo",),
        versions=(
            VersionDefinition("v1beta1", schema),
            VersionDefinition("v1beta2", schema),
        ),
    )
