"""Queued owners whose pods are queued (``/mutate-apps-v1-deployment``, ``-statefulset``).

A kind with the :class:`~scheduler.jobs.QueuedThroughPods` capability has no
Workload of its own: on create and update, a queued one gets its pod
template marked by its integration (``propagate``: a Deployment's pods are
queued one by one, a StatefulSet's as one pod group), so each pod it makes
is gated and queued by the pod webhook.  The registration sends only those
that name a queue, in managed namespaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api import objects
from scheduler.jobs import Integration, QueuedThroughPods
from webhook.review import AdmissionRequest, ResponseBody, allow, json_patch
from webhook.settings import WebhookSettings
from webhook.subject import object_of_request


def _template_metadata(owner: Mapping[str, Any]) -> dict[str, Any]:
    spec = owner.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    metadata = template.get("metadata") if isinstance(template, Mapping) else None
    return {"metadata": dict(metadata) if isinstance(metadata, Mapping) else {}}


def template_patch(owner: Mapping[str, Any], kind: QueuedThroughPods) -> list[dict[str, Any]]:
    """Pure: the JSON patch (under ``/spec/template``) for a queued owner on create or update."""
    if not objects.queue_name(owner) or "template" not in (owner.get("spec") or {}):
        return []  # not queued; or nothing to mark (the API server refuses it anyway)
    before = {"spec": {"template": _template_metadata(owner)}}
    after = {"spec": {"template": _template_metadata(kind.propagate(owner))}}
    return json_patch(before, after)


async def mutate_template_request(
    integration: Integration,
    kind: QueuedThroughPods,
    request: AdmissionRequest,
    *,
    settings: WebhookSettings,
) -> tuple[ResponseBody, str]:
    """The answer to the kind's mutating path and a one-word outcome."""
    if request.operation not in ("CREATE", "UPDATE"):
        return allow(request.uid), "allowed"
    owner = object_of_request(request, integration)
    if not settings.enabled(integration):
        return allow(request.uid), "allowed"
    patch = template_patch(owner, kind)
    return allow(request.uid, patch=patch), "patched" if patch else "allowed"
