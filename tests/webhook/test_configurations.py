"""The webhook registrations: who waits on kuota, and with which failure policy."""

from __future__ import annotations

from certs.inject import ca_bundle, crd_conversion_patch, webhook_configuration_patch
from scheduler.api.crds import load_crds, with_conversion_webhook
from scheduler.api.validation.workload_status import JUDGED_STATUS_FIELDS, REASON_PATTERN
from scheduler.jobs.managed_namespaces import ManagedNamespaces
from webhook.configurations import mutating_configuration, validating_configuration
from webhook.routes import admission_endpoints

URL = {"url": "https://127.0.0.1:9443", "caBundle": "Y2E="}


def by_name(configuration: dict) -> dict:
    return {entry["name"]: entry for entry in configuration["webhooks"]}


def test_only_queued_jobs_fail_closed_by_default() -> None:
    mutating = by_name(mutating_configuration(URL, kuota_namespace="kuota"))
    queued, unqueued = (
        mutating["queued-jobs.mutate.kuota.io"],
        mutating["unqueued-jobs.mutate.kuota.io"],
    )
    assert queued["failurePolicy"] == "Fail" and unqueued["failurePolicy"] == "Ignore"
    assert (
        "kueue.x-k8s.io/queue-name' in object.metadata.labels"
        in queued["matchConditions"][0]["expression"]
    )
    assert unqueued["matchConditions"][0]["expression"].startswith("!")
    for entry in (queued, unqueued):
        assert entry["namespaceSelector"]["matchExpressions"][0]["values"] == [
            "kube-system",
            "kuota",
        ]
        assert entry["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate-batch-v1-job"
    every = [*mutating.values(), *by_name(validating_configuration(URL)).values()]
    assert all(e["sideEffects"] == "None" and e["admissionReviewVersions"] == ["v1"] for e in every)
    # Short where other controllers wait (Jobs, pods); the API's default for kuota's kinds.
    kuota_kinds = [e for e in every if e["rules"][0]["apiGroups"] == ["kueue.x-k8s.io"]]
    assert kuota_kinds and all(e["timeoutSeconds"] == 10 for e in kuota_kinds)
    assert all(e["timeoutSeconds"] <= 5 for e in every if e not in kuota_kinds)
    # Pods reach kuota only when they name a queue (objectSelector) or a parent queues
    # them (matchConditions on the annotation), in a managed namespace.
    pods = [e for e in every if any(rule["resources"] == ["pods"] for rule in e["rules"])]
    assert [e["name"] for e in pods] == [
        "queued-pods.mutate.kuota.io",
        "parent-suspended-pods.mutate.kuota.io",
    ]
    assert pods[0]["objectSelector"] == {
        "matchExpressions": [{"key": "kueue.x-k8s.io/queue-name", "operator": "Exists"}]
    }
    by_parent = [c["name"] for c in pods[1]["matchConditions"]]
    assert by_parent == ["has-no-queue-name", "suspended-by-parent"]
    for entry in pods:
        assert entry["namespaceSelector"]["matchExpressions"][0]["values"] == [
            "kube-system",
            "kuota",
        ]


def test_manage_jobs_without_queue_name_fails_closed_in_managed_namespaces() -> None:
    selector = {"matchLabels": {"kuota": "enabled"}}
    mutating = by_name(
        mutating_configuration(
            URL, manage_jobs_without_queue_name=True, managed_namespace_selector=selector
        )
    )
    unqueued = mutating["unqueued-jobs.mutate.kuota.io"]
    assert unqueued["failurePolicy"] == "Fail"
    assert unqueued["namespaceSelector"]["matchLabels"] == {"kuota": "enabled"}
    assert "unqueued-jobs.validate.kuota.io" in by_name(
        validating_configuration(URL, manage_jobs_without_queue_name=True)
    )
    pods = mutating["unqueued-pods.mutate.kuota.io"]
    assert pods["namespaceSelector"]["matchLabels"] == {"kuota": "enabled"}
    assert "objectSelector" not in pods, "every Pod of a managed namespace, queued or not"
    assert "unqueued-pods.mutate.kuota.io" not in by_name(mutating_configuration(URL))


def test_unqueued_statefulsets_are_sent_when_they_may_be_queued() -> None:
    name = "unqueued-statefulsets.mutate.kuota.io"
    assert name not in by_name(mutating_configuration(URL))
    managing = by_name(mutating_configuration(URL, manage_jobs_without_queue_name=True))[name]
    assert managing["failurePolicy"] == "Fail"
    assert managing["rules"][0]["resources"] == ["statefulsets"]
    assert [c["name"] for c in managing["matchConditions"]] == ["has-no-queue-name"]
    # The Kueue-compatible install: registered failing open while the setting is off.
    compatible = by_name(mutating_configuration(URL, unqueued_pods=True))[name]
    assert compatible["failurePolicy"] == "Ignore"
    assert "unqueued-deployments.mutate.kuota.io" not in by_name(
        mutating_configuration(URL, manage_jobs_without_queue_name=True)
    )


def test_every_registered_path_is_served_and_kuota_kinds_match_exactly() -> None:
    served = set(admission_endpoints())
    for configuration in (mutating_configuration(URL), validating_configuration(URL)):
        for entry in configuration["webhooks"]:
            assert entry["clientConfig"]["url"].removeprefix("https://127.0.0.1:9443") in served
            if entry["rules"][0]["apiGroups"] == ["kueue.x-k8s.io"]:
                assert entry["matchPolicy"] == "Exact" and entry["rules"][0]["apiVersions"] == ["*"]
    workloads = by_name(validating_configuration(URL))["workload.validate.kuota.io"]
    assert workloads["rules"][0]["resources"] == ["workloads", "workloads/status"]


def test_the_ca_bundle_is_injected_only_where_it_is_missing() -> None:
    bundle = ca_bundle(b"-----BEGIN CERTIFICATE-----\n")
    configuration = mutating_configuration(URL)
    patch = webhook_configuration_patch(configuration, bundle)
    assert patch is not None and all(
        e["clientConfig"]["caBundle"] == bundle for e in patch["webhooks"]
    )
    assert webhook_configuration_patch(patch, bundle) is None
    crd = load_crds()[0]
    assert crd_conversion_patch(crd, bundle) is None, "strategy None is left alone"
    converted = with_conversion_webhook(crd, url="https://127.0.0.1:9443/convert", ca_bundle="Y2E=")
    assert crd_conversion_patch(converted, bundle) == {
        "spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": bundle}}}}
    }


def test_every_job_entry_carries_the_managed_namespace_rule() -> None:
    """Queued or not: a Job where kuota manages nothing never reaches kuota."""
    selector = {"matchLabels": {"kuota": "enabled"}}
    rule = ManagedNamespaces(kuota_namespace="kuota", selector=selector).registration_selector()
    for manage in (False, True):
        options = {
            "kuota_namespace": "kuota",
            "manage_jobs_without_queue_name": manage,
            "managed_namespace_selector": selector,
        }
        entries = [
            *mutating_configuration(URL, **options)["webhooks"],
            *validating_configuration(URL, **options)["webhooks"],
        ]
        jobs = [entry for entry in entries if entry["rules"][0]["apiGroups"] != ["kueue.x-k8s.io"]]
        assert {
            "queued-jobs.mutate.kuota.io",
            "queued-jobs.validate.kuota.io",
            "queued-jobsets.mutate.kuota.io",
            "queued-pods.mutate.kuota.io",
            "queued-deployments.mutate.kuota.io",
            "queued-statefulsets.mutate.kuota.io",
        } <= {entry["name"] for entry in jobs}
        assert all(entry["namespaceSelector"] == rule for entry in jobs)
        assert rule["matchLabels"] == {"kuota": "enabled"}
        assert all("namespaceSelector" not in e for e in entries if e not in jobs), (
            "kuota's own kinds are cluster-wide business"
        )


# Every kueue.x-k8s.io resource Kueue v0.19.2 registers a webhook for, from its
# config/components/webhook/manifests.yaml (module sigs.k8s.io/kueue@v0.19.2).
KUEUE_V0_19_2_MUTATED = {"clusterqueues", "resourceflavors", "workloads"}
KUEUE_V0_19_2_VALIDATED = {
    "clusterqueues",
    "cohorts",
    "resourceflavors",
    "workloads",
    "workloads/status",
}


def _kueue_resources(configuration: dict) -> set[str]:
    return {
        resource
        for entry in configuration["webhooks"]
        for rule in entry["rules"]
        if rule["apiGroups"] == ["kueue.x-k8s.io"]
        for resource in rule["resources"]
    }


def test_status_writes_reach_the_webhook_only_where_kueue_has_one() -> None:
    """Issue 13: no round trip for the scheduler's status writes where Kueue has none.

    kuota validates the spec of more kinds than Kueue does (LocalQueue,
    Topology, ...: the same code as ``kuota validate``), but a subresource
    only where Kueue registers it: ``workloads/status``.  ClusterQueue and
    LocalQueue status, written by kuota's scheduler on every change, never
    wait on the webhook.
    """
    validated = _kueue_resources(validating_configuration(URL))
    mutated = _kueue_resources(mutating_configuration(URL))
    status = {resource for resource in validated | mutated if "/" in resource}
    assert status == {r for r in KUEUE_V0_19_2_VALIDATED if "/" in r} == {"workloads/status"}
    assert KUEUE_V0_19_2_VALIDATED <= validated, "kuota checks at least what Kueue checks"
    assert mutated == KUEUE_V0_19_2_MUTATED


def test_only_the_schedulers_own_workload_status_writes_skip_the_webhook() -> None:
    """Issue 13: the scheduler's decisions (admission, eviction, pending explanation) are
    not sent back to the webhook; everyone else's Workload status writes still are."""
    default = by_name(validating_configuration(URL, kuota_namespace="kuota"))
    condition, _, _ = default["workload.validate.kuota.io"]["matchConditions"]
    assert condition["expression"] == (
        "!(has(request.subResource) && request.subResource == 'status' && "
        "request.userInfo.username == 'system:serviceaccount:kuota:kuota-scheduler')"
    )
    named = by_name(validating_configuration(URL, scheduler_identity="user:sched"))
    assert "'user:sched'" in named["workload.validate.kuota.io"]["matchConditions"][0]["expression"]
    others = [
        entry
        for name, entry in default.items()
        if name.endswith(".validate.kuota.io")
        and name != "workload.validate.kuota.io"
        and entry["rules"][0]["apiGroups"] == ["kueue.x-k8s.io"]
    ]
    assert others and all("matchConditions" not in entry for entry in others)


def test_a_status_write_that_keeps_what_the_rules_read_skips_the_webhook() -> None:
    """Issue 13: a status write the rules cannot fault (it keeps every field they read and
    whether QuotaReserved is True, and its conditions are valid) is not sent; the e2e test
    (e2e/test_webhook_scope.py) runs the expression on a real API server."""
    entry = by_name(validating_configuration(URL))["workload.validate.kuota.io"]
    _, condition, _ = entry["matchConditions"]
    expression = condition["expression"]
    assert expression.startswith("!(has(request.subResource) && request.subResource == 'status'")
    assert "request.kind.version == 'v1beta2'" in expression, "legacy versions are judged"
    for field in JUDGED_STATUS_FIELDS:
        assert f"object.status.{field} == oldObject.status.{field}" in expression
    assert f"'^{REASON_PATTERN}$'" in expression


def test_a_plain_v1beta2_workload_create_skips_the_validating_webhook() -> None:
    """The CRD's CEL rules judge a plain create
    (docs/validation.md#rules-enforced-by-the-api-server); what only the webhook can
    judge still selects it.  The e2e test
    (e2e/test_crd_cel.py) runs the expression on a real API server."""
    entry = by_name(validating_configuration(URL))["workload.validate.kuota.io"]
    *_, condition = entry["matchConditions"]
    assert condition["name"] == "not-a-create-the-crd-rules-judge"
    expression = condition["expression"]
    assert expression.startswith("!(!has(request.subResource) && request.operation == 'CREATE'")
    assert "request.kind.version == 'v1beta2'" in expression, "legacy versions are judged"
    for annotation in (
        "kueue.x-k8s.io/admission-gated-by",
        "kueue.x-k8s.io/elastic-job",
        "kueue.x-k8s.io/priority-boost",
    ):
        assert f"'{annotation}'" in expression
    assert "r != 'pods'" in expression
    assert "!has(p.template.metadata.labels)" in expression
    assert "size(p.template.spec.containers) > 0" in expression
    # The warning for a field kuota does not act on comes from the webhook.
    assert "size(object.spec.preemptionGates) == 0" in expression


def test_only_a_workload_with_a_min_count_is_sent_to_the_mutating_webhook() -> None:
    """Issue 13: the Workload mutation only ever drops minCount, so a Workload without one
    is created with one webhook round trip (validation), not two; the finalizer-adding
    mutations of ClusterQueues and ResourceFlavors still see every create."""
    mutating = by_name(mutating_configuration(URL, kuota_namespace="kuota"))
    (condition,) = mutating["workload.mutate.kuota.io"]["matchConditions"]
    assert "has(p.minCount)" in condition["expression"]
    for name in ("clusterqueue.mutate.kuota.io", "resourceflavor.mutate.kuota.io"):
        assert "matchConditions" not in mutating[name]
