"""kuota's MutatingWebhookConfiguration and ValidatingWebhookConfiguration, as data.

The registrations decide who waits on kuota, so they are written to block
the cluster only where a miss would be worse than a refusal
(docs/architecture.md#the-webhook):

* every kind in the integration registry gets its entries from the
  capabilities it declares (:func:`scheduler.jobs.capability`): the kinds
  created suspended (Job, JobSet, ...) the same entries, at their own
  paths; a rule for a kind the API server does not serve (JobSet without
  its CRD) is harmless.
* ``failurePolicy: Fail`` only where a miss lets a queued Job run unqueued —
  the Job entries whose ``matchConditions`` select Jobs that carry a queue
  name (label, or the legacy annotation) — and for kuota's own kinds, which
  nothing but kuota reads.  Jobs without a queue name go to a separate entry
  that is ``Ignore`` (its only job is the convenience of the namespace's
  ``default`` LocalQueue) unless ``manageJobsWithoutQueueName`` makes those
  Jobs kuota's too, and then it is ``Fail`` in the managed namespaces only.
* every Job entry, queued or not, carries the managed-namespace rule as its
  ``namespaceSelector`` (:mod:`scheduler.jobs.managed_namespaces`:
  ``managedJobsNamespaceSelector``, and never ``kube-system`` or kuota's own
  namespace).  A Job in another namespace is not kuota's at all, queue name
  or not (Kueue v0.19, ``ManagedJobsNamespaceSelectorAlwaysRespected``), so
  the API server does not even call kuota for it, and a broken webhook can
  never stop the system from repairing itself.
* ``timeoutSeconds`` is small for the entries other controllers wait on
  (5 s for Jobs and the pod family, 3 s for the ``Ignore`` entry): the
  answers are computed in well under a millisecond, a slow webhook is a
  broken one.  kuota's own kinds get the API's default, 10 s (what Kueue's
  registrations get): they hold up only writes of kuota's objects, and those
  come in bursts (Kueue's large benchmark creates 50,000 Workloads in about a
  minute), where the first requests wait behind the TLS handshakes of the
  API server's new connections: over 5 s on 2 busy cores.
* ``sideEffects: None`` (dry-run requests are answered like real ones and
  change nothing), ``admissionReviewVersions: [v1]``.
* kuota's kinds are registered for every version with ``matchPolicy:
  Exact``: a ``v1alpha1`` manifest is judged as written, by the same code
  path as ``kuota validate``.  The Workload's mutating entry matches only
  Workloads with a ``minCount`` (the one field it may drop), so creating a
  Workload costs one webhook round trip, not two.
* kinds gated at creation (Pods: CREATE) and kinds queued through their
  pods (Deployments, StatefulSets: CREATE and UPDATE) get one mutating
  entry each, narrowed by an ``objectSelector`` to objects carrying the
  queue-name label,
  so a webhook outage never stops the Job controller or any other workload
  from creating its pods.

All functions are pure; ``client_config`` is ``{"url": ...}`` on the local
cluster or ``{"service": {...}}`` in a real installation (the chart).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.refs import (
    KUEUE_GROUP,
    POD_SUSPENDING_PARENT_ANNOTATION,
    QUEUE_NAME_LABEL,
)
from scheduler.jobs import (
    AdmissionRules,
    GateOnCreate,
    Integration,
    QueuedThroughPods,
    SuspendOnCreate,
    capability,
    integrations,
    kinds_with,
    webhook_path,
)
from scheduler.jobs.managed_namespaces import ManagedNamespaces
from webhook.mutate_templates import queued_without_queue_name
from webhook.routes import KUOTA_KINDS
from webhook.workload_writes import (
    not_a_create_the_crd_rules_judge,
    not_a_status_write_the_rules_pass_as_is,
    not_the_schedulers_status_write,
)

MUTATING_NAME: Final = "kuota-mutating-webhook-configuration"
VALIDATING_NAME: Final = "kuota-validating-webhook-configuration"
QUEUE_KEY: Final = QUEUE_NAME_LABEL  # label, or the legacy annotation of the same key
KUOTA_KIND_TIMEOUT_SECONDS: Final = 10
"""timeoutSeconds of the entries for kuota's own kinds (see the module docstring)."""


def _has_queue(var: str) -> str:
    def present(field: str) -> str:
        return (
            f"(has({var}.metadata.{field}) && '{QUEUE_KEY}' in {var}.metadata.{field} && "
            f"{var}.metadata.{field}['{QUEUE_KEY}'] != '')"
        )

    return f"({present('labels')} || {present('annotations')})"


QUEUED_CREATE: Final = {"name": "has-queue-name", "expression": _has_queue("object")}
PARENT_SUSPENDED: Final = {
    "name": "suspended-by-parent",
    "expression": (
        "has(object.metadata.annotations) && "
        f"'{POD_SUSPENDING_PARENT_ANNOTATION}' in object.metadata.annotations"
    ),
}
"""A Pod another controller queues (``kueue.x-k8s.io/pod-suspending-parent``), queue or not."""
NOT_PARENT_SUSPENDED: Final = {
    "name": "not-suspended-by-parent",
    "expression": f"!({PARENT_SUSPENDED['expression']})",
}
UNQUEUED_CREATE: Final = {"name": "has-no-queue-name", "expression": f"!{_has_queue('object')}"}
QUEUED_EITHER: Final = {
    "name": "has-or-had-queue-name",
    "expression": f"(object != null && {_has_queue('object')}) || "
    f"(oldObject != null && {_has_queue('oldObject')})",
}


WORKLOAD_HAS_MIN_COUNT: Final = {
    # The Workload mutation only ever drops minCount (docs/validation.md#defaulting): a Workload
    # without one is not worth a round trip, and at creation bursts those round trips are most
    # of the webhook's load.  The type guards keep a malformed object from failing the condition
    # (CEL's && absorbs the error of the other side when one side is false): schema validation
    # and the validating webhook still judge it.
    "name": "has-a-min-count",
    "expression": "has(object.spec) && type(object.spec) == map && has(object.spec.podSets) "
    "&& type(object.spec.podSets) == list && "
    "object.spec.podSets.exists(p, type(p) == map && has(p.minCount))",
}


def _with_path(client_config: Mapping[str, Any], path: str) -> dict[str, Any]:
    config = copy.deepcopy(dict(client_config))
    if "url" in config:
        config["url"] = config["url"].rstrip("/") + path
    elif "service" in config:
        config["service"] = {**config["service"], "path": path}
    else:
        raise ValueError("client_config needs url or service")
    return config


def _entry(
    name: str,
    path: str,
    client_config: Mapping[str, Any],
    *,
    rules: list[dict[str, Any]],
    failure_policy: str,
    timeout: int,
    match_policy: str = "Equivalent",
    namespace_selector: Mapping[str, Any] | None = None,
    object_selector: Mapping[str, Any] | None = None,
    match_conditions: list[Mapping[str, str]] | None = None,
    mutating: bool,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "clientConfig": _with_path(client_config, path),
        "rules": rules,
        "failurePolicy": failure_policy,
        "matchPolicy": match_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": timeout,
    }
    if namespace_selector is not None:
        entry["namespaceSelector"] = copy.deepcopy(dict(namespace_selector))
    if object_selector is not None:
        entry["objectSelector"] = copy.deepcopy(dict(object_selector))
    if match_conditions:
        entry["matchConditions"] = [dict(condition) for condition in match_conditions]
    if mutating:
        entry["reinvocationPolicy"] = "Never"
    return entry


def _job_rule(integration: Integration, operations: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "apiGroups": [integration.group],
            "apiVersions": [integration.api_version.rpartition("/")[2]],
            "operations": operations,
            "resources": [integration.resource],
            "scope": "Namespaced",
        }
    ]


def _suspendable() -> tuple[Integration, ...]:
    """The kinds created suspended by the generic decision (their registration order)."""
    return kinds_with(SuspendOnCreate)


def _gated_on_create() -> list[Integration]:
    """The kinds held back at creation (a Pod): gated, not suspended."""
    return [i for i in integrations() if capability(i, GateOnCreate) is not None]


def _marked_on_create() -> list[tuple[Integration, list[str]]]:
    """Kinds whose queued objects are marked at creation, and the operations that mark them.

    A gated kind (a Pod) is held back on CREATE only; a kind queued through
    its pods (a Deployment) has its pod template marked on CREATE and UPDATE.
    """
    marked = []
    for integration in integrations():
        if capability(integration, GateOnCreate) is not None:
            marked.append((integration, ["CREATE"]))
        elif capability(integration, QueuedThroughPods) is not None:
            marked.append((integration, ["CREATE", "UPDATE"]))
    return marked


QUEUED_POD: Final = {
    "matchExpressions": [{"key": QUEUE_NAME_LABEL, "operator": "Exists"}],
}
"""The objectSelector of the Pod entry: only Pods that name a queue ever reach kuota."""


def _kueue_rule(resources: list[str], operations: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "apiGroups": [KUEUE_GROUP],
            "apiVersions": ["*"],
            "operations": operations,
            "resources": resources,
        }
    ]


def mutating_configuration(
    client_config: Mapping[str, Any],
    *,
    kuota_namespace: str = "kueue-system",
    manage_jobs_without_queue_name: bool = False,
    managed_namespace_selector: Mapping[str, Any] | None = None,
    default_local_queue: bool = True,
    labels: Mapping[str, str] | None = None,
    unqueued_pods: bool = False,
) -> dict[str, Any]:
    """Pure: kuota's MutatingWebhookConfiguration.

    ``unqueued_pods``: send Pods without a queue name to the webhook even while
    ``manageJobsWithoutQueueName`` is off (failing open then), as Kueue registers
    them, so that turning it on in the Configuration takes effect at the next
    restart, with no new registration (the Kueue-compatible install, whose
    Configuration is a ConfigMap edited in place: docs/configuration.md).
    """
    managed = ManagedNamespaces(
        kuota_namespace=kuota_namespace, selector=managed_namespace_selector
    ).registration_selector()
    webhooks = [
        _entry(
            f"queued-{integration.resource}.mutate.kuota.io",
            webhook_path(integration, "mutate"),
            client_config,
            rules=_job_rule(integration, ["CREATE"]),
            failure_policy="Fail",
            timeout=5,
            namespace_selector=managed,
            match_conditions=[QUEUED_CREATE],
            mutating=True,
        )
        for integration in _suspendable()
    ]
    # Plain Pods with a queue name are gated at creation; Deployments' and
    # StatefulSets' pod templates are marked so that each pod is queued by the Pod
    # entry.  Kueue's failurePolicy (Fail), but narrowed by an objectSelector too, so
    # an outage of the webhook blocks only queued objects, never the cluster's other
    # Pods.
    webhooks += [
        _entry(
            f"queued-{integration.resource}.mutate.kuota.io",
            webhook_path(integration, "mutate"),
            client_config,
            rules=_job_rule(integration, operations),
            failure_policy="Fail",
            timeout=5,
            namespace_selector=managed,
            object_selector=QUEUED_POD,
            match_conditions=[QUEUED_CREATE],
            mutating=True,
        )
        for integration, operations in _marked_on_create()
    ]
    # A Pod whose parent queues it is gated whether or not it names a queue yet (its
    # queue and group may be added later, as Kueue allows): only such Pods, by
    # matchConditions, since an objectSelector cannot look at annotations.  With
    # manageJobsWithoutQueueName the unqueued entry below already sends them.
    webhooks += [
        _entry(
            f"parent-suspended-{integration.resource}.mutate.kuota.io",
            webhook_path(integration, "mutate"),
            client_config,
            rules=_job_rule(integration, ["CREATE"]),
            failure_policy="Fail",
            timeout=5,
            namespace_selector=managed,
            match_conditions=[UNQUEUED_CREATE, PARENT_SUSPENDED],
            mutating=True,
        )
        for integration in kinds_with(GateOnCreate)
        if not manage_jobs_without_queue_name
    ]
    # Jobs without a queue name get the namespace's default LocalQueue (failing open), or
    # with manageJobsWithoutQueueName are suspended (failing closed); with the latter, Pods
    # without one are held back too (Kueue's behaviour), in managed namespaces only.
    # ``unqueued_pods`` registers those Pods (and StatefulSets) while it is off, failing open,
    # apart from the Pods a parent queues (the entry above, failing closed).
    unqueued: list[tuple[Integration, bool]] = []
    if manage_jobs_without_queue_name or default_local_queue:
        unqueued += [(i, manage_jobs_without_queue_name) for i in _suspendable()]
    if manage_jobs_without_queue_name or unqueued_pods:
        unqueued += [(i, manage_jobs_without_queue_name) for i in _gated_on_create()]
        # A StatefulSet naming no queue is queued too: its template is marked.
        unqueued += [
            (i, manage_jobs_without_queue_name)
            for i in integrations()
            if queued_without_queue_name(i)
        ]
    unqueued_only: list[Mapping[str, str]] = [UNQUEUED_CREATE]
    if not manage_jobs_without_queue_name:
        unqueued_only.append(NOT_PARENT_SUSPENDED)
    webhooks += [
        _entry(
            f"unqueued-{integration.resource}.mutate.kuota.io",
            webhook_path(integration, "mutate"),
            client_config,
            rules=_job_rule(integration, ["CREATE"]),
            failure_policy="Fail" if closed else "Ignore",
            timeout=5 if closed else 3,
            namespace_selector=managed,
            match_conditions=unqueued_only
            if capability(integration, GateOnCreate) is not None
            else [UNQUEUED_CREATE],
            mutating=True,
        )
        for integration, closed in unqueued
    ]
    for kind in KUOTA_KINDS:
        if kind.mutating:
            webhooks.append(
                _entry(
                    f"{kind.kind.lower()}.mutate.kuota.io",
                    kind.mutate_path,
                    client_config,
                    rules=_kueue_rule([kind.plural], ["CREATE"]),
                    failure_policy="Fail",
                    timeout=KUOTA_KIND_TIMEOUT_SECONDS,
                    match_policy="Exact",
                    match_conditions=(
                        [WORKLOAD_HAS_MIN_COUNT] if kind.kind == "Workload" else None
                    ),
                    mutating=True,
                )
            )
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {
            "name": MUTATING_NAME,
            "labels": dict(labels or {"app.kubernetes.io/name": "kuota"}),
        },
        "webhooks": webhooks,
    }


def validating_configuration(
    client_config: Mapping[str, Any],
    *,
    kuota_namespace: str = "kueue-system",
    manage_jobs_without_queue_name: bool = False,
    managed_namespace_selector: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    scheduler_identity: str | None = None,
) -> dict[str, Any]:
    """Pure: kuota's ValidatingWebhookConfiguration.

    ``scheduler_identity`` (default: the ``kuota-scheduler`` ServiceAccount of
    ``kuota_namespace``, as the chart names it) is the user whose Workload status
    writes skip the webhook: the scheduler writes a Workload's status only as
    the admission decisions it has just computed (an admission, an eviction, a
    pending explanation), thousands a minute in a busy cluster, and a round trip
    through the webhook for each would cost the API server and the webhook more
    than it guards.  Every other writer's status writes, and every write of the
    Workload itself, are still validated.
    """
    identity = scheduler_identity or f"system:serviceaccount:{kuota_namespace}:kuota-scheduler"
    managed = ManagedNamespaces(
        kuota_namespace=kuota_namespace, selector=managed_namespace_selector
    ).registration_selector()
    webhooks = [
        _entry(
            f"queued-{integration.resource}.validate.kuota.io",
            webhook_path(integration, "validate"),
            client_config,
            rules=_job_rule(integration, ["CREATE", "UPDATE"]),
            failure_policy="Fail",
            timeout=5,
            namespace_selector=managed,
            match_conditions=[QUEUED_EITHER],
            mutating=False,
        )
        for integration in kinds_with(AdmissionRules)
    ]
    if manage_jobs_without_queue_name:
        webhooks += [
            _entry(
                f"unqueued-{integration.resource}.validate.kuota.io",
                webhook_path(integration, "validate"),
                client_config,
                rules=_job_rule(integration, ["CREATE", "UPDATE"]),
                failure_policy="Fail",
                timeout=5,
                namespace_selector=managed,
                match_conditions=[
                    {
                        "name": "has-no-queue-name",
                        "expression": f"!((object != null && {_has_queue('object')}) || "
                        f"(oldObject != null && {_has_queue('oldObject')}))",
                    }
                ],
                mutating=False,
            )
            for integration in kinds_with(AdmissionRules)
        ]
    for kind in KUOTA_KINDS:
        resources = [kind.plural] + ([f"{kind.plural}/status"] if kind.status_subresource else [])
        webhooks.append(
            _entry(
                f"{kind.kind.lower()}.validate.kuota.io",
                kind.validate_path,
                client_config,
                rules=_kueue_rule(resources, ["CREATE", "UPDATE"]),
                failure_policy="Fail",
                timeout=KUOTA_KIND_TIMEOUT_SECONDS,
                match_policy="Exact",
                match_conditions=(
                    [
                        not_the_schedulers_status_write(identity),
                        not_a_status_write_the_rules_pass_as_is(),
                        not_a_create_the_crd_rules_judge(),
                    ]
                    if kind.kind == "Workload"
                    else None
                ),
                mutating=False,
            )
        )
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {
            "name": VALIDATING_NAME,
            "labels": dict(labels or {"app.kubernetes.io/name": "kuota"}),
        },
        "webhooks": webhooks,
    }
