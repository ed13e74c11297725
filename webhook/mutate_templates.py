"""Queued owners whose pods are queued (``/mutate-apps-v1-deployment``, ``-statefulset``).

A kind with the :class:`~scheduler.jobs.QueuedThroughPods` capability has no
Workload of its own: on create and update, a queued one gets its pod
template marked by its integration (``propagate``: a Deployment's pods are
queued one by one, a StatefulSet's as one pod group), so each pod it makes
is gated and queued by the pod webhook.  The registration sends those that
name a queue, in managed namespaces; with ``manageJobsWithoutQueueName``, a
kind whose objects are queued without a queue name (a StatefulSet:
:attr:`~scheduler.jobs.ReplicaGroups.unqueued_pod_selector`) is sent, and
marked, without one too (docs/concepts.md#statefulsets).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.api import objects
from scheduler.jobs import Integration, QueuedThroughPods, ReplicaGroups, capability
from webhook.lookup import ClusterLookup, LookupFailed
from webhook.mutate_jobs import namespace_is_managed
from webhook.review import AdmissionRequest, ResponseBody, allow, json_patch
from webhook.settings import WebhookSettings
from webhook.subject import object_of_request


def template_patch(
    owner: Mapping[str, Any], kind: QueuedThroughPods, *, without_queue_name: bool = False
) -> list[dict[str, Any]]:
    """Pure: the JSON patch for a queued owner on create or update (its pod templates' marks).

    Wherever the kind keeps its pod templates (a Deployment's
    ``spec.template``, a LeaderWorkerSet's leader and worker templates), the
    patch holds only what its ``propagate`` changed.  ``without_queue_name``: the owner
    is queued even though it names no queue (see the module docstring).
    """
    if not objects.queue_name(owner) and not without_queue_name:
        return []  # not queued
    return json_patch(owner, kind.propagate(owner))


def queued_without_queue_name(integration: Integration) -> bool:
    """Whether the kind's objects naming no queue are queued under manageJobsWithoutQueueName
    (their templates marked): pure."""
    replicas = capability(integration, ReplicaGroups)
    return replicas is not None and replicas.unqueued_pod_selector is not None


async def mutate_template_request(
    integration: Integration,
    kind: QueuedThroughPods,
    request: AdmissionRequest,
    *,
    settings: WebhookSettings,
    lookup: ClusterLookup,
) -> tuple[ResponseBody, str]:
    """The answer to the kind's mutating path and a one-word outcome."""
    if request.operation not in ("CREATE", "UPDATE"):
        return allow(request.uid), "allowed"
    owner = object_of_request(request, integration)
    if not settings.enabled(integration):
        return allow(request.uid), "allowed"
    without_queue_name = False
    if (
        not objects.queue_name(owner)
        and settings.manage_jobs_without_queue_name
        and queued_without_queue_name(integration)
    ):
        namespace = request.namespace or objects.namespace(owner) or ""
        try:
            without_queue_name = await namespace_is_managed(
                namespace, settings=settings, lookup=lookup
            )
        except LookupFailed:
            without_queue_name = True  # the registration let it through: queued, as it asks
    patch = template_patch(owner, kind, without_queue_name=without_queue_name)
    return allow(request.uid, patch=patch), "patched" if patch else "allowed"
