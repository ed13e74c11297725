"""Validating jobs of every integration on create and update (docs/validation.md#jobs,
plus one kuota rule).

One decision for every registered job kind, served at the kind's own path
(``/validate-batch-v1-job``, ``/validate-jobset-x-k8s-io-v1alpha2-jobset``).
The label and annotation rules (JOB-1 … JOB-U11 for a Job, the shared ones
for a JobSet) are the integration's ``validate_create``/``validate_update``
(``scheduler/jobs/<kind>/validation.py``), the same functions ``kuota
validate`` runs, so the messages match byte for byte.  The webhook adds what
only it can know:

* whether the namespace has a LocalQueue named ``default`` (JOB-U2), asked
  through the lookup only when a queue name is being removed;
* **JOB-K1** (kuota): a managed job of a kind created suspended (a Job, a
  JobSet, ...; where the kind keeps its suspend flag) may go from suspended
  to running only by the hand of kuota's scheduler.  The requesting identity
  (``userInfo.username``) must be one of ``--scheduler-identity``; anyone else
  unsuspending a queued job — or creating it unsuspended, should the mutating
  webhook not have run — is denied with 403, because letting it through would
  run the job without quota.  A job made by a queued job (a RayJob's
  RayCluster carries the RayJob's labels; found by walking controller owners,
  as the mutating webhook does) is its owner's business and runs unsuspended;
* whether the job is kuota's at all, and whether the request comes from
  kuota's scheduler (:class:`~scheduler.jobs.AdmissionFacts`): a Job's
  **JOB-K2** (a running Job keeps the ``parallelism`` and ``completions`` its
  quota was reserved for, unless it is elastic) applies to managed Jobs,
  updated by anyone but the scheduler; the gate
  ``ElasticJobsViaWorkloadSlices`` of the Configuration goes with the facts.

"Managed" follows :mod:`scheduler.jobs.managed_namespaces`: a queued Job
that reaches this endpoint is in a managed namespace (the registration's
``namespaceSelector`` says so, as for mutation), and a Job without a queue
name is managed only with ``manageJobsWithoutQueueName`` in a namespace the
rule selects (looked up).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduler.api.feature_gates import enabled
from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.objects import queue_name
from scheduler.jobs import (
    AdmissionFacts,
    AdmissionRules,
    Integration,
    JobIntegration,
    ResolvedThroughReference,
    SuspendOnCreate,
    capability,
)
from webhook.lookup import ClusterLookup, LookupFailed
from webhook.mutate_jobs import OwnerUnreadable, has_managed_ancestor, namespace_is_managed
from webhook.review import AdmissionRequest, ResponseBody, allow, deny, deny_internal
from webhook.settings import WebhookSettings
from webhook.subject import namespace_of_request, object_of_request

SUSPEND = FieldPath(("spec", "suspend"))


def _spec_suspend(job: Mapping[str, Any]) -> bool:
    spec = job.get("spec")
    return isinstance(spec, dict) and spec.get("suspend") is True


def suspended_check(integration: Integration) -> Callable[[Mapping[str, Any]], bool]:
    """Where the kind says a job is suspended (``spec.suspend`` unless it says otherwise)."""
    kind = capability(integration, JobIntegration)
    return kind.is_suspended if kind is not None else _spec_suspend


def suspend_path(integration: Integration) -> FieldPath:
    """Where the kind keeps its suspend flag (``spec.suspend``, ``spec.runPolicy.suspend``): pure.

    Read off what the kind's own ``suspend`` sets on an empty object.
    """
    kind = capability(integration, JobIntegration)
    if kind is None:
        return SUSPEND
    path: list[str] = []
    node: Any = kind.suspend({})
    while isinstance(node, Mapping) and len(node) == 1:
        key, node = next(iter(node.items()))
        path.append(str(key))
    return FieldPath(tuple(path)) if node is True else SUSPEND


def _queue_of(integration: Integration, job: Mapping[str, Any]) -> str:
    """The queue the kind says the job asks for (a kind may leave some jobs unqueued)."""
    kind = capability(integration, JobIntegration)
    return kind.queue_name(job) if kind is not None else queue_name(job)


def unsuspend_violation(
    job: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    *,
    username: str,
    settings: WebhookSettings,
    suspended: Callable[[Mapping[str, Any]], bool] = _spec_suspend,
    at: FieldPath = SUSPEND,
) -> FieldError | None:
    """JOB-K1 for a job (of any kind created suspended) already known to be managed: pure."""
    if suspended(job) or (old is not None and not suspended(old)):
        return None
    if username in settings.scheduler_identities:
        return None
    allowed = ", ".join(settings.scheduler_identities)
    if old is None:
        message = (
            f"a queued job must be created suspended ({at}: true); "
            f'only kuota\'s scheduler ({allowed}) may start it, not "{username}"'
        )
    else:
        message = (
            f"a queued job can be unsuspended only by kuota's scheduler ({allowed}), "
            f'not by "{username}"; '
            "kuota unsuspends it when its Workload is admitted"
        )
    return error(at, message, origin="W", rule="JOB-K1")


async def resolved(
    integration: Integration, job: Mapping[str, Any], *, lookup: ClusterLookup
) -> dict[str, Any]:
    """The job with the object it names for its pod sets (a TrainJob's runtime), read through
    the lookup, so that the kind's rules on its pod sets run; as is when the kind names none
    or the object is not there (docs/concepts.md#trainjob)."""
    resolver = capability(integration, ResolvedThroughReference)
    reference = resolver.reference(job) if resolver is not None else None
    if resolver is None or reference is None:
        return dict(job)
    referenced = await lookup.get_object(
        reference.api_version, reference.kind, reference.namespace or "", reference.name
    )
    return dict(job) if referenced is None else resolver.resolved(job, referenced)


async def validate_request(
    integration: Integration,
    rules: AdmissionRules,
    request: AdmissionRequest,
    *,
    settings: WebhookSettings,
    lookup: ClusterLookup,
) -> tuple[ResponseBody, str]:
    """The answer to the kind's validating path and its outcome word."""
    if request.operation not in ("CREATE", "UPDATE"):
        return allow(request.uid), "allowed"
    job = object_of_request(request, integration)
    namespace = namespace_of_request(request)
    if not settings.enabled(integration):
        return allow(request.uid), "allowed"
    old = request.old_object if request.operation == "UPDATE" else None
    _suspended = suspended_check(integration)
    try:
        removing_queue = old is not None and not queue_name(job) and bool(queue_name(old))
        has_default = removing_queue and await lookup.has_default_local_queue(namespace)
        managed = bool(_queue_of(integration, job)) or (
            settings.manage_jobs_without_queue_name
            and not (_suspended(job) and (old is None or _suspended(old)))
            and await namespace_is_managed(namespace, settings=settings, lookup=lookup)
        )
    except LookupFailed as failed:
        return deny_internal(
            request.uid, f"kuota could not look up namespace {namespace!r}: {failed}"
        ), "error"
    try:
        job = await resolved(integration, job, lookup=lookup)
    except LookupFailed as failed:
        return deny_internal(request.uid, f"kuota could not read what the job names: {failed}"), (
            "error"
        )
    by_scheduler = request.user.username in settings.scheduler_identities
    facts = AdmissionFacts(
        namespace_has_default_queue=has_default,
        managed=managed,
        by_scheduler=by_scheduler,
        elastic_jobs=enabled(settings.feature_gates, "ElasticJobsViaWorkloadSlices"),
    )
    errors = (
        rules.validate_create(job, facts=facts)
        if old is None
        else rules.validate_update(job, old, facts=facts)
    )
    if managed and capability(integration, SuspendOnCreate) is not None:
        violation = unsuspend_violation(
            job,
            old,
            username=request.user.username,
            settings=settings,
            suspended=_suspended,
            at=suspend_path(integration),
        )
        if violation is not None:
            try:
                made_by_queued_owner = await has_managed_ancestor(
                    job, namespace, settings=settings, lookup=lookup
                )
            except OwnerUnreadable as unreadable:
                return deny_internal(request.uid, str(unreadable)), "error"
            if not made_by_queued_owner:
                errors.append(violation)
    if errors:
        return deny(request.uid, errors), "denied"
    return allow(request.uid), "allowed"
