"""Topology-aware scheduling in a job's pod templates: the requests a user writes, and what
starting a TAS pod set adds (pure).

See docs/concepts.md#topology-aware-scheduling.  A user asks for TAS with
annotations on a pod template; the Workload's pod set then carries a
``topologyRequest`` built from them as Kueue builds it (the kind adds how its
pods are numbered: a Job's completion index, a JobSet's job index and
replicas, a StatefulSet's pod index).  When the job starts, each pod set that
was given a topology assignment gets the scheduling gate
``kueue.x-k8s.io/topology`` (kuota lifts it from each pod once it knows the
pod's domain) and, when the request named no level, the ``unconstrained``
annotation, so its pods are recognised as TAS pods.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.refs import KUEUE_GROUP

REQUIRED: Final = f"{KUEUE_GROUP}/podset-required-topology"
PREFERRED: Final = f"{KUEUE_GROUP}/podset-preferred-topology"
UNCONSTRAINED: Final = f"{KUEUE_GROUP}/podset-unconstrained-topology"
SLICE_REQUIRED: Final = f"{KUEUE_GROUP}/podset-slice-required-topology"
SLICE_SIZE: Final = f"{KUEUE_GROUP}/podset-slice-size"
SLICE_CONSTRAINTS: Final = f"{KUEUE_GROUP}/podset-slice-required-topology-constraints"
GROUP_NAME: Final = f"{KUEUE_GROUP}/podset-group-name"
TOPOLOGY_GATE: Final = f"{KUEUE_GROUP}/topology"
"""The scheduling gate a TAS pod keeps until kuota knows its domain."""
WORKLOAD_ANNOTATION: Final = f"{KUEUE_GROUP}/workload"
"""The Workload a started pod belongs to (on every pod kuota starts)."""
POD_INDEX_OFFSET: Final = f"{KUEUE_GROUP}/pod-index-offset"
POD_GROUP_INDEX_LABEL: Final = f"{KUEUE_GROUP}/pod-group-pod-index"
"""A pod group's pod's rank, by which its pods are placed in order."""
POD_GROUP_INDEX_LABEL_ANNOTATION: Final = f"{KUEUE_GROUP}/pod-group-pod-index-label"
"""Names the Pod's label whose value the webhook copies to :data:`POD_GROUP_INDEX_LABEL`."""

JOB_COMPLETION_INDEX: Final = "batch.kubernetes.io/job-completion-index"
JOBSET_JOB_INDEX: Final = "jobset.sigs.k8s.io/job-index"
STATEFULSET_POD_INDEX: Final = "apps.kubernetes.io/pod-index"

EXPLICIT: Final = (REQUIRED, PREFERRED, SLICE_REQUIRED, SLICE_CONSTRAINTS)
"""Annotations that ask for TAS by themselves (a pod carrying one is a TAS pod)."""


def _annotations(template: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = template.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def is_tas_pod(annotations: Mapping[str, Any]) -> bool:
    """Whether a pod is placed by topology (its usage is counted through its Workload): pure."""
    return any(key in annotations for key in (*EXPLICIT, UNCONSTRAINED))


def _boolean(text: object) -> bool | None:
    """Go's ``strconv.ParseBool``: pure."""
    if text in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if text in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    return None


def _slice_layers(text: object) -> list[dict[str, Any]] | None:
    try:
        layers = json.loads(str(text))
    except ValueError:
        return None
    if not isinstance(layers, list) or not 1 <= len(layers) <= 3:
        return None
    if not all(isinstance(layer, dict) for layer in layers):
        return None
    return layers


def topology_request(
    template: Mapping[str, Any],
    *,
    pod_index_label: str | None = None,
    sub_group_index_label: str | None = None,
    sub_group_count: int | None = None,
) -> dict[str, Any] | None:
    """The pod set's ``topologyRequest`` from its template's annotations, as Kueue builds it.

    ``None`` when the template asks for nothing and the kind numbers no
    pods; a malformed annotation asks for nothing (the webhook refuses it at
    creation, docs/validation.md).  Pure.
    """
    annotations = _annotations(template)
    request: dict[str, Any] = {}
    slices = (SLICE_REQUIRED in annotations and SLICE_SIZE in annotations) or (
        SLICE_CONSTRAINTS in annotations
    )
    if REQUIRED in annotations:
        request["required"] = str(annotations[REQUIRED])
    elif PREFERRED in annotations:
        request["preferred"] = str(annotations[PREFERRED])
    elif UNCONSTRAINED in annotations:
        value = _boolean(annotations[UNCONSTRAINED])
        if value is None:
            return None
        request["unconstrained"] = value
    elif not slices and pod_index_label is None and sub_group_index_label is None:
        if sub_group_count is None:
            return None
    if SLICE_CONSTRAINTS in annotations:
        layers = _slice_layers(annotations[SLICE_CONSTRAINTS])
        if layers is None:
            return None
        request["podsetSliceRequiredTopologyConstraints"] = layers
    elif SLICE_REQUIRED in annotations and SLICE_SIZE in annotations:
        try:
            size = int(str(annotations[SLICE_SIZE]))
        except ValueError:
            return None
        request["podSetSliceRequiredTopology"] = str(annotations[SLICE_REQUIRED])
        request["podSetSliceSize"] = size
    if pod_index_label is not None:
        request["podIndexLabel"] = pod_index_label
    if sub_group_count is not None:
        request["subGroupCount"] = sub_group_count
    if sub_group_index_label is not None:
        request["subGroupIndexLabel"] = sub_group_index_label
    if GROUP_NAME in annotations and (REQUIRED in annotations or PREFERRED in annotations):
        request["podSetGroupName"] = str(annotations[GROUP_NAME])
    return request


def names_a_level(request: Mapping[str, Any] | None) -> bool:
    """Whether a ``topologyRequest`` says required, preferred or unconstrained: pure."""
    return request is not None and any(
        request.get(key) is not None for key in ("required", "preferred", "unconstrained")
    )


def started_annotations(pod_set: Mapping[str, Any], workload_name: str) -> dict[str, str]:
    """What the pods of a started TAS pod set are annotated with (module docstring): pure."""
    annotations = {WORKLOAD_ANNOTATION: workload_name}
    request = pod_set.get("topologyRequest")
    if not names_a_level(request if isinstance(request, Mapping) else None):
        annotations[UNCONSTRAINED] = "true"
    return annotations


__all__ = [
    "EXPLICIT",
    "GROUP_NAME",
    "JOBSET_JOB_INDEX",
    "JOB_COMPLETION_INDEX",
    "POD_GROUP_INDEX_LABEL",
    "POD_GROUP_INDEX_LABEL_ANNOTATION",
    "POD_INDEX_OFFSET",
    "PREFERRED",
    "REQUIRED",
    "SLICE_CONSTRAINTS",
    "SLICE_REQUIRED",
    "SLICE_SIZE",
    "STATEFULSET_POD_INDEX",
    "TOPOLOGY_GATE",
    "UNCONSTRAINED",
    "WORKLOAD_ANNOTATION",
    "is_tas_pod",
    "names_a_level",
    "started_annotations",
    "topology_request",
]
