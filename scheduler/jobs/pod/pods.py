"""What kuota knows about one Pod: gated, managed, finalized, finished, its role (pure).

A Pod cannot be suspended once it runs: it waits instead behind the
scheduling gate ``kueue.x-k8s.io/admission`` that kuota's webhook puts on it
at creation (:func:`gate_on_create`), with the label that makes the
scheduler watch it and the finalizer that lets its end be seen.  Starting it
takes the gate off (:func:`ungate`); stopping it deletes it.  A second gate,
``kueue.x-k8s.io/topology``, goes on every queued Pod at creation too, since
a gate can only be removed later, never added: it stays on when the Pod's
admission places it by topology (docs/concepts.md#topology-aware-scheduling)
until kuota knows the Pod's domain, and comes off with the first otherwise.  A Pod is
finished when its phase is ``Succeeded`` or ``Failed``.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.refs import (
    ADMISSION_SCHEDULING_GATE,
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
    POD_MANAGED_FINALIZER,
    POD_SUSPENDING_PARENT_ANNOTATION,
    ROLE_HASH_ANNOTATION,
)
from scheduler.jobs import pod_template
from scheduler.jobs.pod_template import has_gate, without_gate
from scheduler.jobs.protocol import FinishedState, PodSetInfo, RawObject
from scheduler.jobs.registry import for_object
from scheduler.jobs.topology import (
    POD_GROUP_INDEX_LABEL,
    POD_GROUP_INDEX_LABEL_ANNOTATION,
    TOPOLOGY_GATE,
    topology_request,
)

MAIN_POD_SET: Final = "main"

_mapping = pod_template.mapping


def _spec(pod: RawObject) -> Mapping[str, Any]:
    return _mapping(pod.get("spec"))


def is_gated(pod: RawObject) -> bool:
    """Whether the Pod waits behind kuota's admission gate: pure."""
    return has_gate(pod, ADMISSION_SCHEDULING_GATE)


def is_terminated(pod: RawObject) -> bool:
    """Phase ``Succeeded`` or ``Failed``: pure."""
    return objects.status(pod).get("phase") in ("Succeeded", "Failed")


def is_ready(pod: RawObject) -> bool:
    """The Pod's ``Ready`` condition is True: pure."""
    return objects.is_true(pod, "Ready")


def is_managed(pod: RawObject) -> bool:
    """The webhook took this Pod in (label ``kueue.x-k8s.io/managed: "true"``): pure."""
    return objects.labels(pod).get(MANAGED_LABEL) == MANAGED_LABEL_VALUE


def has_finalizer(pod: RawObject) -> bool:
    finalizers = objects.metadata(pod).get("finalizers")
    return isinstance(finalizers, list) and POD_MANAGED_FINALIZER in finalizers


def _sorted_map(value: object) -> object:
    """A Go map as ``json.Marshal`` writes it (keys sorted); nil stays null: pure."""
    return dict(sorted(value.items())) if isinstance(value, Mapping) else None


def _containers_shape(containers: object) -> list[dict[str, Any]] | None:
    if not isinstance(containers, list) or not containers:
        return None
    return [
        {
            "ports": c.get("ports"),
            "resources": {"requests": _sorted_map(_mapping(c.get("resources")).get("requests"))},
        }
        for c in containers
        if isinstance(c, Mapping)
    ]


def spec_shape(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a pod spec that decide its admission, as Kueue takes them: pure.

    Per container: requests and ports; nodeSelector, affinity, tolerations,
    runtimeClassName, priority, topologySpreadConstraints, overhead,
    resourceClaims; pod-level requests when set.  Maps come with sorted keys,
    as Go's JSON encoder writes them.  A pod's role (:func:`role_hash`) and
    the parts of a serving kind's pod template that cannot change while it
    is queued are this shape.
    """
    shape: dict[str, Any] = {
        "affinity": spec.get("affinity"),
        "containers": _containers_shape(spec.get("containers")),
        "initContainers": _containers_shape(spec.get("initContainers")),
        "nodeSelector": _sorted_map(spec.get("nodeSelector")),
        "overhead": _sorted_map(spec.get("overhead")),
        "priority": spec.get("priority"),
        "resourceClaims": spec.get("resourceClaims"),
        "runtimeClassName": spec.get("runtimeClassName"),
        "tolerations": spec.get("tolerations"),
        "topologySpreadConstraints": spec.get("topologySpreadConstraints"),
    }
    if isinstance(spec.get("resources"), Mapping):
        shape["resources"] = _sorted_map(_mapping(spec["resources"]).get("requests"))
    return dict(sorted(shape.items()))


def pod_set(pod: RawObject, name: str, count: int) -> dict[str, Any]:
    """A pod set of ``count`` pods like ``pod``: its spec as it is, metadata left out: pure.

    Its ``topologyRequest`` comes from the Pod's annotations, the pods
    numbered by ``kueue.x-k8s.io/pod-group-pod-index``, as Kueue builds it
    for every Pod, so that a ClusterQueue of topology flavors only places
    them too (docs/concepts.md#topology-aware-scheduling).
    """
    result: dict[str, Any] = {
        "name": name,
        "count": count,
        "template": {"spec": copy.deepcopy(dict(_spec(pod)))},
    }
    request = topology_request(pod, pod_index_label=POD_GROUP_INDEX_LABEL)
    if request is not None:
        result["topologyRequest"] = request
    return result


def role_hash(pod: RawObject) -> str:
    """The pod's role in a group, as Kueue hashes it: pure.

    The first 8 hex digits of the SHA-256 of the JSON of its spec's shape
    (:func:`spec_shape`), API objects in the order the API server writes
    them, as Go's encoder does.
    """
    encoded = json.dumps({"spec": spec_shape(_spec(pod))}, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()[:8]


def pod_role(pod: RawObject) -> str:
    """The role-hash annotation the webhook wrote, else the hash computed now: pure."""
    return objects.annotation(pod, ROLE_HASH_ANNOTATION) or role_hash(pod)


def gate(pod: RawObject) -> dict[str, Any]:
    """A copy of the Pod as kuota's webhook admits it: gated, labelled managed, finalized: pure.

    Like Kueue's, the webhook also records the Pod's role hash (annotation
    ``kueue.x-k8s.io/role-hash``), by which a pod group's pods form pod sets,
    adds the topology gate (module docstring), and, when the annotation
    ``kueue.x-k8s.io/pod-group-pod-index-label`` names a label, copies that
    label's value to ``kueue.x-k8s.io/pod-group-pod-index``: the Pod's rank
    in its group when it is placed by topology.
    A Pod whose parent queued it (``kueue.x-k8s.io/pod-suspending-parent``,
    a Deployment's) gets no finalizer: its parent replaces it when it goes;
    nor the managed label, which its parent's pod template carries when the
    pod is queued on its own (a Deployment's, a StatefulSet's) and which is
    added later when the pod joins a group its parent decides (a kind with
    replica groups: docs/concepts.md#supported-job-kinds), as Kueue does.
    """
    result = copy.deepcopy(dict(pod))
    metadata = result.setdefault("metadata", {})
    by_parent = objects.annotation(pod, POD_SUSPENDING_PARENT_ANNOTATION)
    if not by_parent:
        metadata["labels"] = {
            **_mapping(metadata.get("labels")),
            MANAGED_LABEL: MANAGED_LABEL_VALUE,
        }
    metadata["annotations"] = {
        **_mapping(metadata.get("annotations")),
        ROLE_HASH_ANNOTATION: role_hash(pod),
    }
    finalizers = list(metadata.get("finalizers") or [])
    if POD_MANAGED_FINALIZER not in finalizers and not by_parent:
        metadata["finalizers"] = [*finalizers, POD_MANAGED_FINALIZER]
    index_from = objects.annotation(pod, POD_GROUP_INDEX_LABEL_ANNOTATION)
    if index_from:
        labels = _mapping(metadata.get("labels"))
        metadata["labels"] = {**labels, POD_GROUP_INDEX_LABEL: str(labels.get(index_from, ""))}
    spec = result.setdefault("spec", {})
    present = {
        gate.get("name") for gate in spec.get("schedulingGates") or [] if isinstance(gate, Mapping)
    }
    added = [
        {"name": name} for name in (ADMISSION_SCHEDULING_GATE, TOPOLOGY_GATE) if name not in present
    ]
    if added:
        spec["schedulingGates"] = [*list(spec.get("schedulingGates") or []), *added]
    return result


def has_topology_gate(pod: RawObject) -> bool:
    """Whether the Pod carries the topology gate (it may be placed by topology): pure."""
    return has_gate(pod, TOPOLOGY_GATE)


def ungate(pod: RawObject, *, by_topology: bool = False) -> dict[str, Any]:
    """A copy of the Pod without kuota's gate (other gates kept): pure.

    The topology gate goes too, unless ``by_topology``: the admission placed
    the Pod by topology and it waits for its domain (module docstring).
    """
    result = without_gate(pod, ADMISSION_SCHEDULING_GATE)
    return result if by_topology else without_gate(result, TOPOLOGY_GATE)


def started(pod: RawObject, info: PodSetInfo | None) -> dict[str, Any]:
    """A copy of the gated Pod as its admission starts it: pure.

    Ungated and steered to its flavor (``info``: its pod set's placement).
    Placed by topology, it keeps the topology gate, and gets the Workload's
    name and its pod set's label, by which kuota finds it to give it its
    domain (docs/concepts.md#topology-aware-scheduling).  A Pod created
    without that gate can no longer get it: it starts without a domain.
    """
    placed = info is not None and TOPOLOGY_GATE in info.scheduling_gates
    by_topology = placed and has_topology_gate(pod)
    result = ungate(pod, by_topology=by_topology)
    if info is not None:
        if placed and not by_topology:
            info = dataclasses.replace(
                info,
                scheduling_gates=tuple(g for g in info.scheduling_gates if g != TOPOLOGY_GATE),
            )
        pod_template.steer(result, info)
    return result


def without_finalizer(pod: RawObject) -> dict[str, Any]:
    """A copy of the Pod without kuota's finalizer: pure."""
    result = copy.deepcopy(dict(pod))
    metadata = result.setdefault("metadata", {})
    finalizers = [f for f in metadata.get("finalizers") or [] if f != POD_MANAGED_FINALIZER]
    if finalizers:
        metadata["finalizers"] = finalizers
    else:
        metadata.pop("finalizers", None)
    return result


def pod_finished(pod: RawObject) -> FinishedState:
    """Kueue's rule for one Pod: terminated; ``Succeeded`` is success: pure."""
    phase = objects.status(pod).get("phase")
    message = str(objects.status(pod).get("message") or "")
    if phase == "Succeeded":
        return FinishedState(True, "Succeeded", message)
    if phase == "Failed":
        return FinishedState(True, "Failed", message)
    return FinishedState(False)


def owned_by_managed_kind(pod: RawObject) -> bool:
    """Whether the Pod's controller is a job kind kuota queues (a Job's, a JobSet's): pure.

    Such a Pod is left to its owner, which is queued instead.
    """
    reference = objects.controller_reference(pod)
    if reference is None:
        return False
    owner = for_object({"apiVersion": reference.get("apiVersion"), "kind": reference.get("kind")})
    return owner is not None and owner.kind != "Pod"


def gate_on_create(pod: RawObject, *, without_queue_name: bool = False) -> dict[str, Any] | None:
    """The queued Pod as the webhook leaves it (:func:`gate`), or None to leave it alone: pure.

    Left alone: a Pod being deleted, a Pod without a queue name (unless
    ``manageJobsWithoutQueueName``: ``without_queue_name``), and a Pod whose
    controller is a kind kuota queues itself; except a Pod whose parent
    queues it (``kueue.x-k8s.io/pod-suspending-parent``), which is gated even
    before it names a queue: its queue and group may be added later, as
    Kueue allows.
    """
    if objects.is_being_deleted(pod):
        return None
    if objects.annotation(pod, POD_SUSPENDING_PARENT_ANNOTATION) is not None:
        return gate(pod)
    if not objects.queue_name(pod) and not without_queue_name:
        return None
    if owned_by_managed_kind(pod):
        return None
    return gate(pod)
