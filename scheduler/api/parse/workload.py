"""Parsing a Workload: pod sets with the parts of the pod template scheduling reads.

The pod template is a full ``PodTemplateSpec``; only requests/limits of
containers and init containers, pod-level resources and overhead, the node
selector, required node affinity and tolerations are read (type errors in
them are reported at their full path, e.g.
``spec.podSets[0].template.spec.containers[1].resources.requests[cpu]``).
Everything else is kept verbatim in ``PodTemplate.raw``.  Defaults: pod set
``name`` ``main``, ``count`` 1, ``spec.active`` true, assignment ``name``
``main`` (validation.md 1.1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.field import FieldPath
from scheduler.api.models import workload as w
from scheduler.api.models.common import frozen_map
from scheduler.api.parse.common import parse_conditions, parse_metadata, tolerations
from scheduler.api.parse.reader import Reader
from scheduler.api.quantity import Quantity
from scheduler.api.refs import (
    DEFAULT_POD_SET_NAME,
    ClusterQueueName,
    FlavorName,
    LocalQueueName,
    PodSetName,
    ResourceName,
)

Raw = Mapping[str, Any]
EMPTY: Raw = {}


def _names(reader: Reader, raw: Raw, key: str, path: FieldPath) -> tuple[str, ...]:
    """A list of ``{name: ...}`` objects reduced to the names."""
    return reader.objects(
        raw, key, path, lambda item, item_path: reader.text(item, "name", item_path)
    )


def _resource_list(
    reader: Reader, raw: Raw, key: str, path: FieldPath
) -> dict[ResourceName, Quantity]:
    return {
        ResourceName(name): amount for name, amount in reader.quantity_map(raw, key, path).items()
    }


def _container(reader: Reader, raw: Raw, path: FieldPath) -> w.ContainerResources:
    resources = reader.object(raw, "resources", path) or EMPTY
    resources_path = path.child("resources")
    limits = _resource_list(reader, resources, "limits", resources_path)
    requests = _resource_list(reader, resources, "requests", resources_path)
    effective = {**limits, **requests}  # a missing request takes the limit
    return w.ContainerResources(
        name=reader.text(raw, "name", path),
        requests=frozen_map(effective),
        limits=frozen_map(limits),
        restart_policy=reader.string(raw, "restartPolicy", path),
    )


def _node_selector_terms(
    reader: Reader, affinity: Raw, path: FieldPath
) -> tuple[w.NodeSelectorTerm, ...] | None:
    node_affinity = reader.object(affinity, "nodeAffinity", path)
    if node_affinity is None:
        return None
    node_path = path.child("nodeAffinity")
    required = reader.object(
        node_affinity, "requiredDuringSchedulingIgnoredDuringExecution", node_path
    )
    if required is None:
        return None
    required_path = node_path.child("requiredDuringSchedulingIgnoredDuringExecution")

    def requirement(item: Raw, item_path: FieldPath) -> w.NodeSelectorRequirement:
        return w.NodeSelectorRequirement(
            key=reader.text(item, "key", item_path),
            operator=reader.text(item, "operator", item_path),
            values=reader.strings(item, "values", item_path),
        )

    def term(item: Raw, item_path: FieldPath) -> w.NodeSelectorTerm:
        return w.NodeSelectorTerm(
            match_expressions=reader.objects(item, "matchExpressions", item_path, requirement),
            match_fields=reader.objects(item, "matchFields", item_path, requirement),
        )

    return reader.objects(required, "nodeSelectorTerms", required_path, term)


def parse_pod_template(reader: Reader, raw: Raw, path: FieldPath) -> w.PodTemplate:
    """``podSets[i].template`` (also used for Jobs by the jobs layer): pure but for errors."""
    metadata = reader.object(raw, "metadata", path) or EMPTY
    metadata_path = path.child("metadata")
    spec = reader.object(raw, "spec", path) or EMPTY
    spec_path = path.child("spec")
    containers = reader.objects(
        spec, "containers", spec_path, lambda i, p: _container(reader, i, p)
    )
    init_containers = reader.objects(
        spec, "initContainers", spec_path, lambda i, p: _container(reader, i, p)
    )
    pod_resources = reader.object(spec, "resources", spec_path) or EMPTY
    pod_requests = _resource_list(reader, pod_resources, "requests", spec_path.child("resources"))
    pod_limits = _resource_list(reader, pod_resources, "limits", spec_path.child("resources"))
    pod_level = {**pod_limits, **pod_requests}
    overhead = _resource_list(reader, spec, "overhead", spec_path)
    affinity = reader.object(spec, "affinity", spec_path)
    return w.PodTemplate(
        labels=frozen_map(reader.string_map(metadata, "labels", metadata_path)),
        annotations=frozen_map(reader.string_map(metadata, "annotations", metadata_path)),
        containers=containers,
        init_containers=init_containers,
        overhead=frozen_map(overhead),
        pod_level_requests=frozen_map(pod_level),
        requests=w.effective_pod_requests(
            containers, init_containers, pod_requests=pod_level, overhead=overhead
        ),
        node_selector=frozen_map(reader.string_map(spec, "nodeSelector", spec_path)),
        required_node_affinity=None
        if affinity is None
        else _node_selector_terms(reader, affinity, spec_path.child("affinity")),
        tolerations=tolerations(reader, spec, "tolerations", spec_path),
        priority_class_name=reader.string(spec, "priorityClassName", spec_path),
        raw=frozen_map(raw),
    )


def _pod_set(reader: Reader, raw: Raw, path: FieldPath) -> w.PodSet:
    template = reader.object(raw, "template", path)
    count = reader.integer(raw, "count", path)
    topology_request = reader.object(raw, "topologyRequest", path)
    return w.PodSet(
        name=PodSetName(reader.string(raw, "name", path) or DEFAULT_POD_SET_NAME),
        count=1 if count is None else count,
        min_count=reader.integer(raw, "minCount", path),
        template=None
        if template is None
        else parse_pod_template(reader, template, path.child("template")),
        topology_request=None if topology_request is None else frozen_map(topology_request),
    )


def _admission(reader: Reader, raw: Raw, path: FieldPath) -> w.Admission:
    def assignment(item: Raw, item_path: FieldPath) -> w.PodSetAssignment:
        topology = reader.object(item, "topologyAssignment", item_path)
        return w.PodSetAssignment(
            name=PodSetName(reader.string(item, "name", item_path) or DEFAULT_POD_SET_NAME),
            flavors=frozen_map(
                {
                    ResourceName(r): FlavorName(f)
                    for r, f in reader.string_map(item, "flavors", item_path).items()
                }
            ),
            resource_usage=frozen_map(_resource_list(reader, item, "resourceUsage", item_path)),
            count=reader.integer(item, "count", item_path),
            topology_assignment=None if topology is None else frozen_map(topology),
            delayed_topology_request=reader.string(item, "delayedTopologyRequest", item_path),
        )

    return w.Admission(
        cluster_queue=ClusterQueueName(reader.text(raw, "clusterQueue", path)),
        pod_set_assignments=reader.objects(raw, "podSetAssignments", path, assignment),
    )


def _status(reader: Reader, raw: Raw, path: FieldPath) -> w.WorkloadStatus:
    admission = reader.object(raw, "admission", path)
    requeue = reader.object(raw, "requeueState", path)
    requeue_path = path.child("requeueState")
    stats = reader.object(raw, "schedulingStats", path) or EMPTY

    def check(item: Raw, item_path: FieldPath) -> w.AdmissionCheckStatus:
        def update(entry: Raw, entry_path: FieldPath) -> w.PodSetUpdate:
            return w.PodSetUpdate(
                name=PodSetName(reader.text(entry, "name", entry_path)),
                labels=frozen_map(reader.string_map(entry, "labels", entry_path)),
                annotations=frozen_map(reader.string_map(entry, "annotations", entry_path)),
                node_selector=frozen_map(reader.string_map(entry, "nodeSelector", entry_path)),
                tolerations=tolerations(reader, entry, "tolerations", entry_path),
            )

        return w.AdmissionCheckStatus(
            name=reader.text(item, "name", item_path),
            state=reader.text(item, "state", item_path),
            last_transition_time=reader.timestamp(item, "lastTransitionTime", item_path),
            message=reader.text(item, "message", item_path),
            requeue_after_seconds=reader.integer(item, "requeueAfterSeconds", item_path),
            retry_count=reader.integer(item, "retryCount", item_path),
            pod_set_updates=reader.objects(item, "podSetUpdates", item_path, update),
        )

    return w.WorkloadStatus(
        conditions=parse_conditions(reader, raw, path),
        admission=None
        if admission is None
        else _admission(reader, admission, path.child("admission")),
        requeue_state=None
        if requeue is None
        else w.RequeueState(
            count=reader.integer(requeue, "count", requeue_path),
            requeue_at=reader.timestamp(requeue, "requeueAt", requeue_path),
        ),
        reclaimable_pods=reader.objects(
            raw,
            "reclaimablePods",
            path,
            lambda i, p: w.ReclaimablePod(
                name=PodSetName(reader.text(i, "name", p)), count=reader.integer(i, "count", p) or 0
            ),
        ),
        admission_checks=reader.objects(raw, "admissionChecks", path, check),
        resource_requests=reader.objects(
            raw,
            "resourceRequests",
            path,
            lambda i, p: w.PodSetRequest(
                name=PodSetName(reader.string(i, "name", p) or DEFAULT_POD_SET_NAME),
                resources=frozen_map(_resource_list(reader, i, "resources", p)),
            ),
        ),
        accumulated_past_execution_time_seconds=reader.integer(
            raw, "accumulatedPastExecutionTimeSeconds", path
        ),
        evictions=reader.objects(
            stats,
            "evictions",
            path.child("schedulingStats"),
            lambda i, p: w.EvictionCount(
                reason=reader.text(i, "reason", p),
                underlying_cause=reader.text(i, "underlyingCause", p),
                count=reader.integer(i, "count", p) or 0,
            ),
        ),
        nominated_cluster_names=reader.strings(raw, "nominatedClusterNames", path),
        cluster_name=reader.string(raw, "clusterName", path),
        unhealthy_nodes=_names(reader, raw, "unhealthyNodes", path),
        preemption_gates=reader.objects(
            raw,
            "preemptionGates",
            path,
            lambda i, p: w.PreemptionGateState(
                name=reader.text(i, "name", p),
                position=reader.text(i, "position", p),
                last_transition_time=reader.timestamp(i, "lastTransitionTime", p),
            ),
        ),
    )


def build_workload(reader: Reader, raw: Raw) -> w.Workload:
    spec_path = FieldPath(("spec",))
    spec = reader.object(raw, "spec", FieldPath()) or EMPTY
    status = reader.object(raw, "status", FieldPath()) or EMPTY
    metadata = reader.object(raw, "metadata", FieldPath()) or EMPTY
    ref = reader.object(spec, "priorityClassRef", spec_path)
    ref_path = spec_path.child("priorityClassRef")
    queue_name = reader.string(spec, "queueName", spec_path)
    active = reader.boolean(spec, "active", spec_path)
    return w.Workload(
        metadata=parse_metadata(reader, metadata, FieldPath(("metadata",))),
        spec=w.WorkloadSpec(
            pod_sets=reader.objects(
                spec, "podSets", spec_path, lambda i, p: _pod_set(reader, i, p)
            ),
            queue_name=LocalQueueName(queue_name) if queue_name else None,
            priority_class_ref=None
            if ref is None
            else w.PriorityClassRef(
                group=reader.text(ref, "group", ref_path),
                kind=reader.text(ref, "kind", ref_path),
                name=reader.text(ref, "name", ref_path),
            ),
            priority=reader.integer(spec, "priority", spec_path),
            active=True if active is None else active,
            maximum_execution_time_seconds=reader.integer(
                spec, "maximumExecutionTimeSeconds", spec_path
            ),
            preemption_gates=_names(reader, spec, "preemptionGates", spec_path),
        ),
        status=_status(reader, status, FieldPath(("status",))),
    )
