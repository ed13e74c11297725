"""The ``pod`` integration: plain Pods queued one by one (Kueue's pod framework).

A queued plain Pod is one pod set ``main`` of one pod whose template is the
Pod's own spec (Kueue copies the spec as it is, metadata left out).  It cannot
be suspended once it runs: it waits instead behind the scheduling gate
``kueue.x-k8s.io/admission`` that kuota's webhook puts on it at creation.
"Suspended" therefore means gated (or already terminated); starting it takes
the gate off and adds the admitted flavor's node labels, tolerations and
kuota's pod labels (the API server allows these additions on a gated Pod);
stopping it deletes it (the executor does that: a Pod cannot be put back).
A Pod is finished when its phase is ``Succeeded`` or ``Failed``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import FieldError
from scheduler.api.refs import (
    ADMISSION_SCHEDULING_GATE,
    MANAGED_LABEL,
    MANAGED_LABEL_VALUE,
    POD_MANAGED_FINALIZER,
    POD_SUSPENDING_PARENT_ANNOTATION,
    ROLE_HASH_ANNOTATION,
)
from scheduler.jobs import pod_template
from scheduler.jobs.base import AdmissionFacts, FinishedState, PodSetInfo, RawObject
from scheduler.jobs.registry import register

POD_FRAMEWORK: Final = "pod"
MAIN_POD_SET: Final = "main"

_mapping = pod_template.mapping


def _spec(pod: RawObject) -> Mapping[str, Any]:
    return _mapping(pod.get("spec"))


def is_gated(pod: RawObject) -> bool:
    """Whether the Pod waits behind kuota's admission gate: pure."""
    gates = _spec(pod).get("schedulingGates")
    return isinstance(gates, list) and any(
        isinstance(gate, Mapping) and gate.get("name") == ADMISSION_SCHEDULING_GATE
        for gate in gates
    )


def is_terminated(pod: RawObject) -> bool:
    """Phase ``Succeeded`` or ``Failed``: pure."""
    return objects.status(pod).get("phase") in ("Succeeded", "Failed")


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


def role_hash(pod: RawObject) -> str:
    """The pod's role in a group, as Kueue hashes it: pure.

    The first 8 hex digits of the SHA-256 of the JSON "shape" of the spec
    (per container: requests and ports; nodeSelector, affinity, tolerations,
    runtimeClassName, priority, topologySpreadConstraints, overhead,
    resourceClaims; pod-level requests when set), keys of maps sorted and
    API objects in the order the API server writes them, as Go's encoder does.
    """
    spec = _spec(pod)
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
    encoded = json.dumps({"spec": dict(sorted(shape.items()))}, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()[:8]


def pod_role(pod: RawObject) -> str:
    """The role-hash annotation the webhook wrote, else the hash computed now: pure."""
    return objects.annotation(pod, ROLE_HASH_ANNOTATION) or role_hash(pod)


def gate(pod: RawObject) -> dict[str, Any]:
    """A copy of the Pod as kuota's webhook admits it: gated, labelled managed, finalized: pure.

    Like Kueue's, the webhook also records the Pod's role hash (annotation
    ``kueue.x-k8s.io/role-hash``), by which a pod group's pods form pod sets.
    A Pod whose parent queued it (``kueue.x-k8s.io/pod-suspending-parent``,
    a Deployment's) gets no finalizer: its parent replaces it when it goes.
    """
    result = copy.deepcopy(dict(pod))
    metadata = result.setdefault("metadata", {})
    metadata["labels"] = {**_mapping(metadata.get("labels")), MANAGED_LABEL: MANAGED_LABEL_VALUE}
    metadata["annotations"] = {
        **_mapping(metadata.get("annotations")),
        ROLE_HASH_ANNOTATION: role_hash(pod),
    }
    finalizers = list(metadata.get("finalizers") or [])
    by_parent = objects.annotation(pod, POD_SUSPENDING_PARENT_ANNOTATION)
    if POD_MANAGED_FINALIZER not in finalizers and not by_parent:
        metadata["finalizers"] = [*finalizers, POD_MANAGED_FINALIZER]
    spec = result.setdefault("spec", {})
    if not is_gated(result):
        spec["schedulingGates"] = [
            *list(spec.get("schedulingGates") or []),
            {"name": ADMISSION_SCHEDULING_GATE},
        ]
    return result


def ungate(pod: RawObject) -> dict[str, Any]:
    """A copy of the Pod without kuota's gate (other gates kept): pure."""
    result = copy.deepcopy(dict(pod))
    spec = result.setdefault("spec", {})
    gates = [
        g
        for g in spec.get("schedulingGates") or []
        if not (isinstance(g, Mapping) and g.get("name") == ADMISSION_SCHEDULING_GATE)
    ]
    if gates:
        spec["schedulingGates"] = gates
    else:
        spec.pop("schedulingGates", None)
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


class Pod:
    """The ``pod`` integration for a single plain Pod (every method pure)."""

    framework = POD_FRAMEWORK
    api_version = "v1"
    kind = "Pod"
    group = ""
    resource = "pods"

    def queue_name(self, job: RawObject) -> str:
        return objects.queue_name(job)

    def pod_sets(self, job: RawObject) -> list[dict[str, Any]]:
        return [
            {
                "name": MAIN_POD_SET,
                "count": 1,
                "template": {"spec": copy.deepcopy(dict(_spec(job)))},
            }
        ]

    def is_suspended(self, job: RawObject) -> bool:
        return is_terminated(job) or is_gated(job)

    def suspend(self, job: RawObject) -> dict[str, Any]:
        """A Pod cannot be suspended: unchanged (the executor deletes a Pod it stops)."""
        return copy.deepcopy(dict(job))

    def run_with(self, job: RawObject, pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        result = ungate(job)
        info = next((item for item in pod_sets if item.name == MAIN_POD_SET), None)
        if info is not None:
            pod_template.steer(result, info)
        return result

    def restore(self, job: RawObject, pod_sets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """A started Pod cannot be changed back: unchanged (Kueue's RestorePodSetsInfo)."""
        return copy.deepcopy(dict(job))

    def finished(self, job: RawObject) -> FinishedState:
        return pod_finished(job)

    def active(self, job: RawObject) -> int:
        """1 while the Pod exists and has not terminated (a stop deletes it)."""
        return 0 if is_terminated(job) else 1

    def default(self, job: RawObject, *, queue: str | None, suspend: bool) -> dict[str, Any]:
        """Gated when kuota manages it (:func:`gate`); the webhook's own module decides when."""
        return gate(job) if suspend else copy.deepcopy(dict(job))

    def validate_create(self, job: RawObject, *, facts: AdmissionFacts) -> list[FieldError]:
        """No admission rules of its own (kuota registers no validating webhook for Pods)."""
        return []

    def validate_update(
        self, job: RawObject, old: RawObject, *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return []


POD: Final = register(Pod(), own_decisions=True)
