"""Holding queued objects back at creation, for kinds that cannot be suspended (Pods).

A kind with the :class:`~scheduler.jobs.GateOnCreate` capability (a Pod)
cannot be suspended once it runs; its integration says what a queued one
looks like when kuota lets it be created (a Pod: gated, labelled managed,
finalized, its role hash recorded: ``scheduler/jobs/pod/pods.py``), and this
decision sends the difference as a JSON patch.  Which objects reach it at
all is decided by the registration (:mod:`webhook.configurations`): only
those with the queue-name label (``objectSelector``), or whose parent queues
them (``matchConditions`` on ``kueue.x-k8s.io/pod-suspending-parent``), in
managed namespaces (``namespaceSelector``), so the rest of the cluster's
Pods never wait on kuota.
"""

from __future__ import annotations

from scheduler.api import objects
from scheduler.jobs import GateOnCreate, Integration
from scheduler.jobs.topology_rules import check_topology_on_pod
from webhook.lookup import ClusterLookup, LookupFailed
from webhook.mutate_jobs import namespace_is_managed
from webhook.review import AdmissionRequest, ResponseBody, allow, deny, json_patch
from webhook.settings import WebhookSettings
from webhook.subject import object_of_request


async def mutate_gated_request(
    integration: Integration,
    gated: GateOnCreate,
    request: AdmissionRequest,
    *,
    settings: WebhookSettings,
    lookup: ClusterLookup,
) -> tuple[ResponseBody, str]:
    """The answer to the kind's mutating path and a one-word outcome for metrics and logs."""
    if request.operation != "CREATE":
        return allow(request.uid), "allowed"
    obj = object_of_request(request, integration)
    if not settings.enabled(integration):
        return allow(request.uid), "allowed"
    try:
        namespace = request.namespace or objects.namespace(obj) or ""
        if not await namespace_is_managed(namespace, settings=settings, lookup=lookup):
            # The registration's namespaceSelector already says so; a request that reaches the
            # webhook anyway (a registration older than the Configuration) is left alone.
            return allow(request.uid), "allowed"
    except LookupFailed:
        pass  # the registration let it through: held back, as it asks
    after = gated.gate_on_create(obj, without_queue_name=settings.manage_jobs_without_queue_name)
    if after is not None:
        refused = check_topology_on_pod(obj)
        if refused:
            return deny(request.uid, refused), "denied"
    if after is None:
        return allow(request.uid), "allowed"
    return allow(request.uid, patch=json_patch(obj, after)), "patched"
