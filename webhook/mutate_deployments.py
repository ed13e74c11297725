"""Queued Deployments and StatefulSets (``/mutate-apps-v1-deployment``, ``-statefulset``).

On create and update, a Deployment or StatefulSet with a queue name gets its
pod template marked (:func:`scheduler.jobs.deployment.propagate`,
:func:`scheduler.jobs.statefulset.propagate`), so each of its pods is gated
and queued by the pod webhook: a Deployment's one by one, a StatefulSet's as
one pod group.  The registration sends only those that name a queue in
managed namespaces.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.jobs import deployment as deployments
from scheduler.jobs import statefulset as statefulsets
from webhook.review import AdmissionRequest, BadRequest, ResponseBody, allow, json_patch
from webhook.settings import WebhookSettings

DEPLOYMENT_KIND: Final = ("apps", "v1", "Deployment")
STATEFULSET_KIND: Final = ("apps", "v1", "StatefulSet")
Propagate = Callable[[Mapping[str, Any]], dict[str, Any]]


def _template_metadata(deployment: Mapping[str, Any]) -> dict[str, Any]:
    spec = deployment.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    metadata = template.get("metadata") if isinstance(template, Mapping) else None
    return {"metadata": dict(metadata) if isinstance(metadata, Mapping) else {}}


def template_patch(
    owner: Mapping[str, Any], propagate: Propagate = deployments.propagate
) -> list[dict[str, Any]]:
    """Pure: the JSON patch (under ``/spec/template``) for a queued owner on create or update."""
    if not objects.queue_name(owner) or "template" not in (owner.get("spec") or {}):
        return []  # not queued; or nothing to mark (the API server refuses it anyway)
    before = {"spec": {"template": _template_metadata(owner)}}
    after = {"spec": {"template": _template_metadata(propagate(owner))}}
    return json_patch(before, after)


async def _mutate(
    request: AdmissionRequest, served: tuple[str, str, str], enabled: bool, propagate: Propagate
) -> tuple[ResponseBody, str]:
    if request.operation not in ("CREATE", "UPDATE"):
        return allow(request.uid), "allowed"
    if request.kind != served:
        group, version, kind = request.kind
        raise BadRequest(f"this endpoint serves apps/v1 {served[2]}, got {group}/{version} {kind}")
    if request.object is None:
        raise BadRequest(f"request.object is missing for {request.operation}")
    if not enabled:
        return allow(request.uid), "allowed"
    patch = template_patch(request.object, propagate)
    return allow(request.uid, patch=patch), "patched" if patch else "allowed"


async def mutate_deployment_request(
    request: AdmissionRequest, *, settings: WebhookSettings
) -> tuple[ResponseBody, str]:
    """The answer to ``/mutate-apps-v1-deployment`` and a one-word outcome."""
    return await _mutate(
        request, DEPLOYMENT_KIND, settings.deployments_enabled, deployments.propagate
    )


async def mutate_statefulset_request(
    request: AdmissionRequest, *, settings: WebhookSettings
) -> tuple[ResponseBody, str]:
    """The answer to ``/mutate-apps-v1-statefulset`` and a one-word outcome."""
    return await _mutate(
        request, STATEFULSET_KIND, settings.statefulsets_enabled, statefulsets.propagate
    )
