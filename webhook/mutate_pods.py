"""Gating queued plain Pods on create (Kueue's ``pod`` framework, ``/mutate--v1-pod``).

A Pod created with a ``kueue.x-k8s.io/queue-name`` label in a namespace
kuota manages gets, in one patch (:func:`scheduler.jobs.pod.gate`):

- the scheduling gate ``kueue.x-k8s.io/admission``, so the kube-scheduler
  leaves it alone until its Workload is admitted;
- the label ``kueue.x-k8s.io/managed: "true"``, which is what the scheduler
  watches Pods by;
- the finalizer ``kueue.x-k8s.io/managed``, so the Pod's end is seen before
  the Pod is gone;
- the annotation ``kueue.x-k8s.io/role-hash`` (Kueue's hash of the spec's
  shape), the pod set a pod of a group belongs to.

Left alone: a Pod being deleted, a Pod without a queue name, and a Pod whose
controller is a kind kuota manages itself (a Job's or a JobSet's pods: their
owner is queued, not they).  Which Pods reach this code at all is decided by
the registration (:mod:`webhook.configurations`): only Pods with the
queue-name label (``objectSelector``) in managed namespaces
(``namespaceSelector``), so the Pods of the rest of the cluster never wait on
kuota.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.jobs.pod import POD, gate
from scheduler.jobs.registry import for_object
from webhook.review import AdmissionRequest, BadRequest, ResponseBody, allow, json_patch
from webhook.settings import WebhookSettings

POD_KIND: Final = ("", "v1", "Pod")


def owned_by_managed_kind(pod: Mapping[str, Any]) -> bool:
    """Whether the Pod's controller is a job kind kuota integrates (other than Pod): pure."""
    reference = objects.controller_reference(pod)
    if reference is None:
        return False
    integration = for_object(
        {"apiVersion": reference.get("apiVersion"), "kind": reference.get("kind")}
    )
    return integration is not None and integration is not POD


def pod_patch(pod: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """Pure: the JSON patch for a Pod on create, and a one-word outcome."""
    if objects.is_being_deleted(pod):
        return [], "allowed"
    if not POD.queue_name(pod) or owned_by_managed_kind(pod):
        return [], "allowed"
    return json_patch(_view(pod), _view(gate(pod))), "patched"


def _view(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the patch may touch (labels, annotations, finalizers, scheduling gates)."""
    metadata = objects.metadata(pod)
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    view: dict[str, Any] = {"metadata": {}, "spec": {}}
    for key in ("labels", "annotations", "finalizers"):
        if key in metadata:
            view["metadata"][key] = metadata[key]
    if isinstance(spec, Mapping) and "schedulingGates" in spec:
        view["spec"]["schedulingGates"] = spec["schedulingGates"]
    return view


async def mutate_pod_request(
    request: AdmissionRequest, *, settings: WebhookSettings
) -> tuple[ResponseBody, str]:
    """The answer to ``/mutate--v1-pod`` and a one-word outcome for metrics and logs."""
    if request.operation != "CREATE":
        return allow(request.uid), "allowed"
    if request.kind != POD_KIND:
        group, version, kind = request.kind
        raise BadRequest(
            f"this endpoint serves v1 Pod, got {group + '/' if group else ''}{version} {kind}"
        )
    if request.object is None:
        raise BadRequest(f"request.object is missing for {request.operation}")
    if not settings.pods_enabled:
        return allow(request.uid), "allowed"
    patch, outcome = pod_patch(request.object)
    return allow(request.uid, patch=patch), outcome
