"""Queued Deployments (Kueue's ``deployment`` framework, ``/mutate-apps-v1-deployment``).

On create and update, a Deployment with a queue name gets its pod template
marked (:func:`scheduler.jobs.deployment.propagate`), so each of its pods is
gated and queued by the pod webhook as a plain Pod.  The registration sends
only Deployments that name a queue in managed namespaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.api import objects
from scheduler.jobs.deployment import propagate
from webhook.review import AdmissionRequest, BadRequest, ResponseBody, allow, json_patch
from webhook.settings import WebhookSettings

DEPLOYMENT_KIND: Final = ("apps", "v1", "Deployment")


def _template_metadata(deployment: Mapping[str, Any]) -> dict[str, Any]:
    spec = deployment.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    metadata = template.get("metadata") if isinstance(template, Mapping) else None
    return {"metadata": dict(metadata) if isinstance(metadata, Mapping) else {}}


def deployment_patch(deployment: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Pure: the JSON patch (under ``/spec/template``) for a Deployment on create or update."""
    if not objects.queue_name(deployment):
        return []
    before = {"spec": {"template": _template_metadata(deployment)}}
    after = {"spec": {"template": _template_metadata(propagate(deployment))}}
    if "template" not in (deployment.get("spec") or {}):
        return []  # nothing to mark: the API server refuses such a Deployment anyway
    return json_patch(before, after)


async def mutate_deployment_request(
    request: AdmissionRequest, *, settings: WebhookSettings
) -> tuple[ResponseBody, str]:
    """The answer to ``/mutate-apps-v1-deployment`` and a one-word outcome."""
    if request.operation not in ("CREATE", "UPDATE"):
        return allow(request.uid), "allowed"
    if request.kind != DEPLOYMENT_KIND:
        group, version, kind = request.kind
        raise BadRequest(f"this endpoint serves apps/v1 Deployment, got {group}/{version} {kind}")
    if request.object is None:
        raise BadRequest(f"request.object is missing for {request.operation}")
    if not settings.deployments_enabled:
        return allow(request.uid), "allowed"
    patch = deployment_patch(request.object)
    return allow(request.uid, patch=patch), "patched" if patch else "allowed"
