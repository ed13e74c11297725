"""Suspending queued jobs of every integration on create (docs/validation.md#job-mutation).

One decision for every registered job kind (:mod:`scheduler.jobs.registry`:
``batch/v1`` Job, JobSet, ...), served at the kind's own path
(``/mutate-batch-v1-job``, ``/mutate-jobset-x-k8s-io-v1alpha2-jobset``);
what differs between kinds — how a job is suspended — is the integration's
``default``.  The instant a queued job is created it must already be
suspended: the Job controller creates pods from the first version it sees
(the JobSet controller its child Jobs), so "suspend it later" would be too
late.  The steps, in Kueue's order:

0. an object being deleted is left alone, and so is a Job in a namespace
   kuota does not manage (:mod:`scheduler.jobs.managed_namespaces`: Kueue
   v0.19's locked-on ``ManagedJobsNamespaceSelectorAlwaysRespected``), queue
   name or not — see below for where that rule is applied;
1. a child of a *managed* job (walking controller owner references up to ten
   levels, through owners of a registered kind or of a kind the
   Configuration's ``integrations.externalFrameworks`` names, as Kueue's
   ancestor walk does) is left to its owner;
2. a Job without a queue name in a managed namespace that has a LocalQueue
   named ``default`` gets ``kueue.x-k8s.io/queue-name: default``;
3. with the feature gate ``WorkloadPriorityClassDefaulting`` on (off by
   default, as in Kueue), a Job without ``kueue.x-k8s.io/priority-class``
   and without a controller owner of a kind kuota manages gets
   ``kueue.x-k8s.io/priority-class: default`` when a WorkloadPriorityClass
   named ``default`` exists (looked up; a failed lookup leaves the Job as
   it is, with a warning);
4. a Job with a queue name — or, with ``manageJobsWithoutQueueName``, any
   Job in a managed namespace — gets ``spec.suspend: true``.

Where the namespace rule is applied: by the API server, since every Job
entry of the registrations carries the managed-namespace selector
(:mod:`webhook.configurations`), so a Job elsewhere never reaches this code.
A queued Job that does reach it is in a namespace the registration selected,
and is suspended without a second opinion: no namespace lookup (one GET per
queued Job would cost an etcd read for an answer the API server has already
given), and no check of its own against ``--kuota-namespace`` either, so the
registrations alone decide — one place, the one the API server reads.  A Job
without a queue name needs the namespace's labels anyway (step 2), and gets
the whole rule from :func:`namespace_is_managed`.

The decision is a function of the request, the settings and a
:class:`~webhook.lookup.ClusterLookup`; nothing here talks to a cluster, so a
dry-run request is answered exactly like a real one and has no side effect.
The patch is computed with ``jsonpatch`` from the job as received and the
integration's defaulted copy; the answer stays far below a millisecond.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.feature_gates import enabled
from scheduler.api.objects import queue_name
from scheduler.api.refs import MULTIKUEUE_CONTROLLER, PRIORITY_CLASS_LABEL, V1BETA2
from scheduler.jobs import (
    Integration,
    MultiKueueAdapter,
    SuspendOnCreate,
    capability,
    for_object,
    integration_for,
    multikueue_copy,
)
from scheduler.jobs.managed_namespaces import is_managed_namespace, name_only_labels
from webhook.lookup import ClusterLookup, LookupFailed
from webhook.review import AdmissionRequest, ResponseBody, allow, deny_internal, json_patch
from webhook.settings import WebhookSettings
from webhook.subject import namespace_of_request, object_of_request

MAX_OWNER_DEPTH: Final = 10
DEFAULT_QUEUE: Final = "default"
DEFAULT_PRIORITY: Final = "default"
"""The WorkloadPriorityClass ``WorkloadPriorityClassDefaulting`` gives a job without one."""


class OwnerUnreadable(RuntimeError):
    """An owner in the chain could not be read: Kueue fails the request, so does kuota."""


@dataclass(frozen=True)
class JobMutation:
    """What kuota does to a Job on create, and why (logged once per decision)."""

    suspend: bool = False
    set_default_queue: bool = False
    managed_by: str | None = None
    """``spec.managedBy`` to set (MultiKueue: the Job runs on a worker cluster)."""
    priority_class: str | None = None
    """The WorkloadPriorityClass label to add (``WorkloadPriorityClassDefaulting``)."""
    reason: str = ""
    warnings: tuple[str, ...] = field(default_factory=tuple)


async def namespace_is_managed(
    namespace: str, *, settings: WebhookSettings, lookup: ClusterLookup
) -> bool:
    """The managed-namespace rule for ``namespace``, labels looked up (raises LookupFailed)."""
    if namespace in settings.managed_namespaces.never_managed:
        return False  # no lookup needed
    by_name = name_only_labels(namespace, settings.managed_namespaces)
    if by_name is not None:
        # The selector reads the namespace's name alone (Kueue's default does): no lookup.
        return is_managed_namespace(namespace, by_name, settings.managed_namespaces)
    labels = await lookup.namespace_labels(namespace)
    if labels is None:
        return False
    return is_managed_namespace(namespace, labels, settings.managed_namespaces)


def _job_is_managed(job: Mapping[str, Any], settings: WebhookSettings) -> bool:
    """Pure: a queued job, or any job with ``manageJobsWithoutQueueName`` (the caller checks the
    namespace)."""
    return bool(queue_name(job)) or settings.manage_jobs_without_queue_name


async def has_managed_ancestor(
    job: Mapping[str, Any], namespace: str, *, settings: WebhookSettings, lookup: ClusterLookup
) -> bool:
    """Step 1: walk controller owners up; True when one is a managed job of a registered kind.

    Stops at an owner of a kind without an integration (nor listed in
    ``integrations.externalFrameworks``), at a UID mismatch, at a missing owner
    (kuota decision: an orphan has no managed ancestor) and after ten levels.
    Raises :class:`OwnerUnreadable` when the API server cannot be asked.
    """
    current: Mapping[str, Any] = job
    for _ in range(MAX_OWNER_DEPTH):
        reference = objects.controller_reference(current)
        if reference is None:
            return False
        api_version, kind, name = (
            reference.get("apiVersion"),
            reference.get("kind"),
            reference.get("name"),
        )
        known = for_object(reference) is not None or (
            (api_version, kind) in settings.external_frameworks
        )
        if not known or not isinstance(name, str):
            return False
        try:
            owner = await lookup.get_object(str(api_version), str(kind), namespace, name)
        except LookupFailed as failed:
            raise OwnerUnreadable(
                f"cannot read owner {kind} {namespace}/{name}: {failed}"
            ) from failed
        if owner is None or objects.uid(owner) != reference.get("uid"):
            return False
        if _job_is_managed(owner, settings):
            return True
        current = owner
    return False


def _owned_by_a_managed_kind(job: Mapping[str, Any], settings: WebhookSettings) -> bool:
    """Pure: the job's controller owner is of a kind kuota manages (Kueue's
    ``IsOwnerManagedByKueueForObject``), queued or not."""
    reference = objects.controller_reference(job)
    if reference is None:
        return False
    owner = for_object(reference)
    if owner is not None:
        return settings.enabled(owner)
    return (reference.get("apiVersion"), reference.get("kind")) in settings.external_frameworks


async def default_priority_class(
    job: Mapping[str, Any], *, settings: WebhookSettings, lookup: ClusterLookup
) -> tuple[str | None, tuple[str, ...]]:
    """Step 3: the WorkloadPriorityClass to label the job with, and warnings."""
    if not enabled(settings.feature_gates, "WorkloadPriorityClassDefaulting"):
        return None, ()
    if objects.label(job, PRIORITY_CLASS_LABEL) or _owned_by_a_managed_kind(job, settings):
        return None, ()
    try:
        found = await lookup.get_object(V1BETA2, "WorkloadPriorityClass", "", DEFAULT_PRIORITY)
    except LookupFailed as failed:
        return None, (
            f"kuota could not look up WorkloadPriorityClass {DEFAULT_PRIORITY!r}: {failed}",
        )
    return (DEFAULT_PRIORITY if found is not None else None), ()


async def decide(
    job: Mapping[str, Any], namespace: str, *, settings: WebhookSettings, lookup: ClusterLookup
) -> JobMutation:
    """Steps 0-4 (module docstring) for one Job on CREATE (raises OwnerUnreadable)."""
    if objects.is_being_deleted(job):
        return JobMutation(reason="being deleted")
    if await has_managed_ancestor(job, namespace, settings=settings, lookup=lookup):
        return JobMutation(reason="owned by a managed job")
    mutation = await _suspend_or_not(job, namespace, settings=settings, lookup=lookup)
    priority, warnings = await default_priority_class(job, settings=settings, lookup=lookup)
    if priority is None and not warnings:
        return mutation
    return replace(mutation, priority_class=priority, warnings=(*mutation.warnings, *warnings))


async def _suspend_or_not(
    job: Mapping[str, Any], namespace: str, *, settings: WebhookSettings, lookup: ClusterLookup
) -> JobMutation:
    """Steps 2 and 4: the default queue and the suspension."""
    queue = queue_name(job)
    if queue:
        managed_by, warnings = await multikueue_managed_by(
            job, namespace, queue, settings=settings, lookup=lookup
        )
        return JobMutation(
            suspend=True,
            managed_by=managed_by,
            reason=f"queued in LocalQueue {queue!r}",
            warnings=warnings,
        )
    try:
        if not await namespace_is_managed(namespace, settings=settings, lookup=lookup):
            return JobMutation(reason="namespace not managed")
        has_default = await lookup.has_default_local_queue(namespace)
    except LookupFailed as failed:
        warning = (
            f"kuota could not look up namespace {namespace!r} or its default LocalQueue: {failed}"
        )
        if settings.manage_jobs_without_queue_name:
            return JobMutation(
                suspend=True, reason="managed without queue name", warnings=(warning,)
            )
        return JobMutation(reason="lookup failed", warnings=(warning,))
    if has_default:
        return JobMutation(
            suspend=True, set_default_queue=True, reason="default LocalQueue of the namespace"
        )
    if settings.manage_jobs_without_queue_name:
        return JobMutation(suspend=True, reason="managed without queue name")
    return JobMutation(reason="not queued")


def cluster_queue_checks(cluster_queue: Mapping[str, Any]) -> list[str]:
    """The AdmissionCheck names a ClusterQueue lists (either form of its spec): pure."""
    spec = objects.spec(cluster_queue)
    names = [str(n) for n in spec.get("admissionChecks") or [] if isinstance(n, str)]
    strategy = spec.get("admissionChecksStrategy")
    entries = strategy.get("admissionChecks") if isinstance(strategy, Mapping) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            names.append(str(entry["name"]))
    return names


async def multikueue_managed_by(
    job: Mapping[str, Any],
    namespace: str,
    queue: str,
    *,
    settings: WebhookSettings,
    lookup: ClusterLookup,
) -> tuple[str | None, tuple[str, ...]]:
    """Kueue's ``ApplyDefaultForManagedBy``: a job queued where MultiKueue dispatches.

    Only on a manager (``--multikueue-managed-by``), only for a kind
    MultiKueue copies to workers (:class:`~scheduler.jobs.MultiKueueAdapter`:
    a ``batch/v1`` Job) with no ``managedBy`` yet: its LocalQueue, that queue's
    ClusterQueue and the AdmissionChecks it lists are read; when one has
    controller ``kueue.x-k8s.io/multikueue`` the Job gets ``managedBy`` so the
    manager's Job controller never makes its pods.  A failed lookup leaves the
    Job as it is, with a warning.
    """
    if not settings.multikueue_managed_by:
        return None, ()
    kind = integration_for(job)
    adapter = capability(kind, MultiKueueAdapter) if kind is not None else None
    if adapter is None or multikueue_copy.managed_by(job, adapter.managed_by_at):
        return None, ()
    try:
        local_queue = await lookup.get_object(V1BETA2, "LocalQueue", namespace, queue)
        cq_name = objects.spec(local_queue).get("clusterQueue") if local_queue else None
        if not isinstance(cq_name, str) or not cq_name:
            return None, ()
        cluster_queue = await lookup.get_object(V1BETA2, "ClusterQueue", "", cq_name)
        for name in cluster_queue_checks(cluster_queue or {}):
            check = await lookup.get_object(V1BETA2, "AdmissionCheck", "", name)
            if check and objects.spec(check).get("controllerName") == MULTIKUEUE_CONTROLLER:
                return MULTIKUEUE_CONTROLLER, ()
    except LookupFailed as failed:
        return None, (f"kuota could not look up whether queue {queue!r} uses MultiKueue: {failed}",)
    return None, ()


def mutation_patch(
    integration: SuspendOnCreate, job: Mapping[str, Any], mutation: JobMutation
) -> list[dict[str, Any]]:
    """Pure: the JSON patch for ``mutation`` (never removes a label, never unsuspends)."""
    if not (
        mutation.suspend
        or mutation.set_default_queue
        or mutation.managed_by
        or mutation.priority_class
    ):
        return []
    after = integration.default(
        job,
        queue=DEFAULT_QUEUE if mutation.set_default_queue else None,
        suspend=mutation.suspend,
    )
    if mutation.managed_by:
        at = (
            integration.managed_by_at
            if isinstance(integration, MultiKueueAdapter)
            else multikueue_copy.SPEC_MANAGED_BY
        )
        after = multikueue_copy.with_managed_by(after, at, mutation.managed_by)
    if mutation.priority_class:
        metadata = after.setdefault("metadata", {})
        metadata["labels"] = {
            **(metadata.get("labels") or {}),
            PRIORITY_CLASS_LABEL: mutation.priority_class,
        }
    return json_patch(job, after)


async def mutate_request(
    integration: Integration,
    suspendable: SuspendOnCreate,
    request: AdmissionRequest,
    *,
    settings: WebhookSettings,
    lookup: ClusterLookup,
) -> tuple[ResponseBody, str]:
    """The answer to the kind's mutating path and a one-word outcome for metrics and logs.

    A disabled framework (not in ``integrations.frameworks``) is let through
    unchanged.  The children of a managed job (the Jobs of a queued JobSet)
    are left to their owner (step 1).
    """
    if request.operation != "CREATE":
        return allow(request.uid), "allowed"
    job = object_of_request(request, integration)
    namespace = namespace_of_request(request)
    if not settings.enabled(integration):
        return allow(request.uid), "allowed"
    return await _mutate(suspendable, request, job, namespace, settings=settings, lookup=lookup)


async def _mutate(
    integration: SuspendOnCreate,
    request: AdmissionRequest,
    job: Mapping[str, Any],
    namespace: str,
    *,
    settings: WebhookSettings,
    lookup: ClusterLookup,
) -> tuple[ResponseBody, str]:
    try:
        mutation = await decide(job, namespace, settings=settings, lookup=lookup)
    except OwnerUnreadable as unreadable:
        return deny_internal(request.uid, str(unreadable)), "error"
    patch = mutation_patch(integration, job, mutation)
    return allow(request.uid, patch=patch, warnings=mutation.warnings), (
        "patched" if patch else "allowed"
    )
