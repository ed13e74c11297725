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


def template_patch(owner: Mapping[str, Any], kind: QueuedThroughPods) -> list[dict[str, Any]]:
    """Pure: the JSON patch for a queued owner on create or update (its pod templates' marks).

    Wherever the kind keeps its pod templates (a Deployment's
    ``spec.template``, a LeaderWorkerSet's leader and worker templates), the
    patch holds only what its ``propagate`` changed.
    """
    if not objects.queue_name(owner):
        return []  # not queued
    return json_patch(owner, kind.propagate(owner))


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
