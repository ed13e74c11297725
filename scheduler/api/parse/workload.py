"""Parsing a pod template: the one part of a Workload read by hand.

A Workload's fields are read by the parser bound to its description
(``kinds.py``), except ``podSets[i].template``: a full ``PodTemplateSpec``,
which the description keeps free-form.  Only requests/limits of containers
and init containers, pod-level resources and overhead, the node selector,
required node affinity and tolerations are read (type errors in them are
reported at their full path, e.g.
``spec.podSets[0].template.spec.containers[1].resources.requests[cpu]``).
Everything else is kept verbatim in ``PodTemplate.raw``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api.crds.schema_kit import toleration
from scheduler.api.field import FieldPath
from scheduler.api.models import workload as w
from scheduler.api.models.common import Toleration, frozen_map
from scheduler.api.parse.binding import bind
from scheduler.api.parse.reader import Reader
from scheduler.api.quantity import Quantity
from scheduler.api.refs import ResourceName

Raw = Mapping[str, Any]
EMPTY: Raw = {}
_TOLERATION = bind(Toleration, toleration(), custom={})


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
    """``podSets[i].template``: pure but for the reader's errors."""
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
        tolerations=reader.objects(
            spec, "tolerations", spec_path, lambda i, p: _TOLERATION(reader, i, p)
        ),
        priority_class_name=reader.string(spec, "priorityClassName", spec_path),
        raw=frozen_map(raw),
    )
