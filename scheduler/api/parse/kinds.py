"""One parser per ``kueue.x-k8s.io/v1beta2`` kind: raw map → model, defaults applied.

Each ``build_<kind>`` reads ``metadata``, ``spec`` and ``status`` through
one ``Reader`` and applies the schema defaults of validation.md 1.1
(queueing strategy, stop policy, preemption, flavor fungibility, pod set
name and count, ``active``, kubeconfig location type).  Pure apart from the
reader's error list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldPath
from scheduler.api.models import others as o
from scheduler.api.models import queues as q
from scheduler.api.models.common import frozen_map
from scheduler.api.parse.common import (
    optional_fair_sharing,
    optional_fair_sharing_status,
    optional_label_selector,
    parse_conditions,
    parse_flavor_usages,
    parse_metadata,
    parse_resource_groups,
    parse_taint,
    tolerations,
)
from scheduler.api.parse.reader import Reader
from scheduler.api.quantity import Quantity
from scheduler.api.refs import (
    ADMISSION_MODES,
    FUNGIBILITY_PREFERENCES,
    MIGRATION_MODES,
    AdmissionCheckName,
    ClusterQueueName,
    CohortName,
    FlavorName,
    ResourceName,
)

Raw = Mapping[str, Any]
ROOT = FieldPath()
EMPTY: Raw = {}


def _section(reader: Reader, raw: Raw, key: str) -> Raw:
    """A top-level section (``metadata``/``spec``/``status``); ``{}`` when absent or malformed."""
    return reader.object(raw, key, ROOT) or EMPTY


def _metadata(reader: Reader, raw: Raw) -> Any:
    return parse_metadata(reader, _section(reader, raw, "metadata"), FieldPath(("metadata",)))


def _optional_name(reader: Reader, raw: Raw, key: str, path: FieldPath) -> str | None:
    value = reader.string(raw, key, path)
    return value if value else None


# --- ResourceFlavor -------------------------------------------------------------


def build_resource_flavor(reader: Reader, raw: Raw) -> q.ResourceFlavor:
    spec_path = FieldPath(("spec",))
    spec = _section(reader, raw, "spec")
    return q.ResourceFlavor(
        metadata=_metadata(reader, raw),
        spec=q.ResourceFlavorSpec(
            node_labels=frozen_map(reader.string_map(spec, "nodeLabels", spec_path)),
            node_taints=reader.objects(
                spec, "nodeTaints", spec_path, lambda i, p: parse_taint(reader, i, p)
            ),
            tolerations=tolerations(reader, spec, "tolerations", spec_path),
            topology_name=_optional_name(reader, spec, "topologyName", spec_path),
        ),
    )


# --- ClusterQueue -----------------------------------------------------------------


def _flavor_fungibility(reader: Reader, spec: Raw, path: FieldPath) -> q.FlavorFungibility:
    raw = reader.object(spec, "flavorFungibility", path) or EMPTY
    here = path.child("flavorFungibility")
    return q.FlavorFungibility(
        when_can_borrow=reader.enum(raw, "whenCanBorrow", here, "MayStopSearch"),
        when_can_preempt=reader.enum(raw, "whenCanPreempt", here, "TryNextFlavor"),
        preference=reader.optional_enum(raw, "preference", here, FUNGIBILITY_PREFERENCES),
    )


def _preemption(reader: Reader, spec: Raw, path: FieldPath) -> q.ClusterQueuePreemption:
    raw = reader.object(spec, "preemption", path) or EMPTY
    here = path.child("preemption")
    borrow = reader.object(raw, "borrowWithinCohort", here) or EMPTY
    borrow_path = here.child("borrowWithinCohort")
    return q.ClusterQueuePreemption(
        within_cluster_queue=reader.enum(raw, "withinClusterQueue", here, "Never"),
        reclaim_within_cohort=reader.enum(raw, "reclaimWithinCohort", here, "Never"),
        borrow_within_cohort=q.BorrowWithinCohort(
            policy=reader.enum(borrow, "policy", borrow_path, "Never"),
            max_priority_threshold=reader.integer(borrow, "maxPriorityThreshold", borrow_path),
        ),
    )


def _admission_checks_strategy(
    reader: Reader, spec: Raw, path: FieldPath
) -> q.AdmissionChecksStrategy | None:
    raw = reader.object(spec, "admissionChecksStrategy", path)
    if raw is None:
        return None

    def rule(item: Raw, item_path: FieldPath) -> q.AdmissionCheckStrategyRule:
        return q.AdmissionCheckStrategyRule(
            name=AdmissionCheckName(reader.text(item, "name", item_path)),
            on_flavors=tuple(FlavorName(f) for f in reader.strings(item, "onFlavors", item_path)),
        )

    return q.AdmissionChecksStrategy(
        admission_checks=reader.objects(
            raw, "admissionChecks", path.child("admissionChecksStrategy"), rule
        )
    )


def _concurrent_admission_policy(
    reader: Reader, spec: Raw, path: FieldPath
) -> q.ConcurrentAdmissionPolicy | None:
    raw = reader.object(spec, "concurrentAdmissionPolicy", path)
    if raw is None:
        return None
    here = path.child("concurrentAdmissionPolicy")
    migration_raw = reader.object(raw, "migration", here)
    if migration_raw is None:
        return q.ConcurrentAdmissionPolicy()
    migration_path = here.child("migration")
    constraints_raw = reader.object(migration_raw, "constraints", migration_path)
    constraints = None
    if constraints_raw is not None:
        constraints = q.MigrationConstraints(
            last_acceptable_flavor_name=reader.string(
                constraints_raw, "lastAcceptableFlavorName", migration_path.child("constraints")
            )
        )
    return q.ConcurrentAdmissionPolicy(
        migration=q.ConcurrentAdmissionMigration(
            mode=reader.optional_enum(migration_raw, "mode", migration_path, MIGRATION_MODES),
            constraints=constraints,
        )
    )


def build_cluster_queue(reader: Reader, raw: Raw) -> q.ClusterQueue:
    path = FieldPath(("spec",))
    spec = _section(reader, raw, "spec")
    status = _section(reader, raw, "status")
    status_path = FieldPath(("status",))
    metadata = _metadata(reader, raw)
    groups = parse_resource_groups(reader, spec, path)  # read in manifest order, so errors are too
    cohort = _optional_name(reader, spec, "cohortName", path)
    scope_raw = reader.object(spec, "admissionScope", path)
    return q.ClusterQueue(
        metadata=metadata,
        spec=q.ClusterQueueSpec(
            resource_groups=groups,
            cohort_name=CohortName(cohort) if cohort else None,
            queueing_strategy=reader.enum(spec, "queueingStrategy", path, "BestEffortFIFO"),
            namespace_selector=optional_label_selector(reader, spec, "namespaceSelector", path),
            flavor_fungibility=_flavor_fungibility(reader, spec, path),
            preemption=_preemption(reader, spec, path),
            admission_checks_strategy=_admission_checks_strategy(reader, spec, path),
            stop_policy=reader.enum(spec, "stopPolicy", path, "None"),
            fair_sharing=optional_fair_sharing(reader, spec, path),
            admission_scope=None
            if scope_raw is None
            else q.AdmissionScope(
                admission_mode=reader.optional_enum(
                    scope_raw, "admissionMode", path.child("admissionScope"), ADMISSION_MODES
                )
            ),
            concurrent_admission_policy=_concurrent_admission_policy(reader, spec, path),
        ),
        status=q.ClusterQueueStatus(
            conditions=parse_conditions(reader, status, status_path),
            flavors_reservation=parse_flavor_usages(
                reader, status, "flavorsReservation", status_path
            ),
            flavors_usage=parse_flavor_usages(reader, status, "flavorsUsage", status_path),
            pending_workloads=reader.integer(status, "pendingWorkloads", status_path) or 0,
            reserving_workloads=reader.integer(status, "reservingWorkloads", status_path) or 0,
            admitted_workloads=reader.integer(status, "admittedWorkloads", status_path) or 0,
            fair_sharing=optional_fair_sharing_status(reader, status, status_path),
        ),
    )


# --- Cohort and LocalQueue -------------------------------------------------------------


def build_cohort(reader: Reader, raw: Raw) -> q.Cohort:
    path = FieldPath(("spec",))
    spec = _section(reader, raw, "spec")
    status = _section(reader, raw, "status")
    parent = _optional_name(reader, spec, "parentName", path)
    return q.Cohort(
        metadata=_metadata(reader, raw),
        spec=q.CohortSpec(
            parent_name=CohortName(parent) if parent else None,
            resource_groups=parse_resource_groups(reader, spec, path),
            fair_sharing=optional_fair_sharing(reader, spec, path),
        ),
        status=q.CohortStatus(
            fair_sharing=optional_fair_sharing_status(reader, status, FieldPath(("status",)))
        ),
    )


def _local_flavor_usages(
    reader: Reader, raw: Raw, key: str, path: FieldPath
) -> tuple[q.LocalQueueFlavorUsage, ...]:
    def usage(item: Raw, item_path: FieldPath) -> q.LocalQueueResourceUsage:
        return q.LocalQueueResourceUsage(
            name=ResourceName(reader.text(item, "name", item_path)),
            total=reader.quantity(item, "total", item_path) or Quantity.zero(),
        )

    def flavor(item: Raw, item_path: FieldPath) -> q.LocalQueueFlavorUsage:
        return q.LocalQueueFlavorUsage(
            name=FlavorName(reader.text(item, "name", item_path)),
            resources=reader.objects(item, "resources", item_path, usage),
        )

    return reader.objects(raw, key, path, flavor)


def build_local_queue(reader: Reader, raw: Raw) -> q.LocalQueue:
    path = FieldPath(("spec",))
    spec = _section(reader, raw, "spec")
    status = _section(reader, raw, "status")
    status_path = FieldPath(("status",))
    cluster_queue = _optional_name(reader, spec, "clusterQueue", path)
    fair_status = reader.object(status, "fairSharing", status_path)
    return q.LocalQueue(
        metadata=_metadata(reader, raw),
        spec=q.LocalQueueSpec(
            cluster_queue=ClusterQueueName(cluster_queue) if cluster_queue else None,
            stop_policy=reader.enum(spec, "stopPolicy", path, "None"),
            fair_sharing=optional_fair_sharing(reader, spec, path),
        ),
        status=q.LocalQueueStatus(
            conditions=parse_conditions(reader, status, status_path),
            pending_workloads=reader.integer(status, "pendingWorkloads", status_path) or 0,
            reserving_workloads=reader.integer(status, "reservingWorkloads", status_path) or 0,
            admitted_workloads=reader.integer(status, "admittedWorkloads", status_path) or 0,
            flavors_reservation=_local_flavor_usages(
                reader, status, "flavorsReservation", status_path
            ),
            flavors_usage=_local_flavor_usages(reader, status, "flavorsUsage", status_path),
            weighted_share=None
            if fair_status is None
            else reader.integer(
                fair_status, "weightedShare", status_path.child("fairSharing"), bits=64
            ),
        ),
    )


# --- small kinds -------------------------------------------------------------------------


def build_workload_priority_class(reader: Reader, raw: Raw) -> o.WorkloadPriorityClass:
    return o.WorkloadPriorityClass(
        metadata=_metadata(reader, raw),
        value=reader.integer(raw, "value", ROOT),
        description=reader.text(raw, "description", ROOT),
    )


def build_admission_check(reader: Reader, raw: Raw) -> o.AdmissionCheck:
    path = FieldPath(("spec",))
    spec = _section(reader, raw, "spec")
    status = _section(reader, raw, "status")
    params = reader.object(spec, "parameters", path)
    params_path = path.child("parameters")
    return o.AdmissionCheck(
        metadata=_metadata(reader, raw),
        spec=o.AdmissionCheckSpec(
            controller_name=reader.text(spec, "controllerName", path),
            parameters=None
            if params is None
            else o.AdmissionCheckParameters(
                api_group=reader.text(params, "apiGroup", params_path),
                kind=reader.text(params, "kind", params_path),
                name=reader.text(params, "name", params_path),
            ),
        ),
        status=o.AdmissionCheckObjectStatus(
            conditions=parse_conditions(reader, status, FieldPath(("status",)))
        ),
    )


def build_multikueue_config(reader: Reader, raw: Raw) -> o.MultiKueueConfig:
    path = FieldPath(("spec",))
    spec = _section(reader, raw, "spec")
    return o.MultiKueueConfig(
        metadata=_metadata(reader, raw),
        spec=o.MultiKueueConfigSpec(
            clusters=reader.strings(spec, "clusters", path),
            quota_management=_optional_name(reader, spec, "quotaManagement", path),
        ),
    )


def build_multikueue_cluster(reader: Reader, raw: Raw) -> o.MultiKueueCluster:
    path = FieldPath(("spec",))
    spec = _section(reader, raw, "spec")
    status = _section(reader, raw, "status")
    source_raw = reader.object(spec, "clusterSource", path)
    source = None
    if source_raw is not None:
        source_path = path.child("clusterSource")
        kube_raw = reader.object(source_raw, "kubeConfig", source_path)
        profile_raw = reader.object(source_raw, "clusterProfileRef", source_path)
        kube_path = source_path.child("kubeConfig")
        source = o.ClusterSource(
            kube_config=None
            if kube_raw is None
            else o.KubeConfigSource(
                location=reader.text(kube_raw, "location", kube_path),
                location_type=reader.enum(kube_raw, "locationType", kube_path, "Secret"),
            ),
            cluster_profile_ref=None
            if profile_raw is None
            else o.ClusterProfileRef(
                name=reader.text(profile_raw, "name", source_path.child("clusterProfileRef"))
            ),
        )
    return o.MultiKueueCluster(
        metadata=_metadata(reader, raw),
        spec=o.MultiKueueClusterSpec(cluster_source=source),
        status=o.MultiKueueClusterStatus(
            conditions=parse_conditions(reader, status, FieldPath(("status",)))
        ),
    )


def build_topology(reader: Reader, raw: Raw) -> o.Topology:
    path = FieldPath(("spec",))
    spec = _section(reader, raw, "spec")
    return o.Topology(
        metadata=_metadata(reader, raw),
        spec=o.TopologySpec(
            levels=reader.objects(
                spec,
                "levels",
                path,
                lambda i, p: o.TopologyLevel(node_label=reader.text(i, "nodeLabel", p)),
            )
        ),
    )


# Workload parsing lives in its own module (it is the largest kind).
from scheduler.api.parse.workload import build_workload  # noqa: E402

BUILDERS = {
    "ResourceFlavor": build_resource_flavor,
    "ClusterQueue": build_cluster_queue,
    "LocalQueue": build_local_queue,
    "Cohort": build_cohort,
    "Workload": build_workload,
    "WorkloadPriorityClass": build_workload_priority_class,
    "AdmissionCheck": build_admission_check,
    "MultiKueueConfig": build_multikueue_config,
    "MultiKueueCluster": build_multikueue_cluster,
    "Topology": build_topology,
}
