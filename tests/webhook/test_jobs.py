"""Job mutation and validation (JOB-*, JOB-K1) through the HTTP endpoints.

See docs/validation.md#job-mutation and docs/validation.md#jobs.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from scheduler.api.validation import admission_status
from scheduler.jobs.batchjob import validate_job
from webhook.lookup import StaticLookup
from webhook.settings import WebhookSettings

from .conftest import ClientFactory, patch_of, post_review
from .reviews import QUEUE, SCHEDULER, admission_review, job

MUTATE, VALIDATE = "/mutate-batch-v1-job", "/validate-batch-v1-job"


def applied(obj: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = jsonpatch.apply_patch(copy.deepcopy(obj), patch_of(response))
    return result


@pytest.mark.parametrize("where", ["labels", "annotations"])
async def test_a_job_with_a_queue_name_is_suspended(webhook: Any, where: str) -> None:
    sent = job(**{where: {QUEUE: "user-queue", "team": "a"}})
    response = await post_review(webhook, MUTATE, admission_review(sent))
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    result = applied(sent, response)
    assert result["spec"]["suspend"] is True
    assert result["metadata"][where] == {QUEUE: "user-queue", "team": "a"}, (
        "labels are never removed"
    )
    assert patch_of(response) == [{"op": "replace", "path": "/spec/suspend", "value": True}]


async def test_suspend_is_added_when_absent_and_nothing_is_sent_when_already_suspended(
    webhook: Any,
) -> None:
    absent = job(labels={QUEUE: "q"}, suspend=None)
    response = await post_review(webhook, MUTATE, admission_review(absent))
    assert patch_of(response) == [{"op": "add", "path": "/spec/suspend", "value": True}]
    already = job(labels={QUEUE: "q"}, suspend=True)
    response = await post_review(webhook, MUTATE, admission_review(already))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_an_unqueued_job_is_left_alone(webhook: Any, lookup: StaticLookup) -> None:
    response = await post_review(webhook, MUTATE, admission_review(job()))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_the_namespaces_default_local_queue_is_set_and_the_job_suspended(
    webhook: Any, lookup: StaticLookup
) -> None:
    lookup.default_queues.add("team-a")
    sent = job()
    result = applied(sent, await post_review(webhook, MUTATE, admission_review(sent)))
    assert result["metadata"]["labels"] == {QUEUE: "default"}
    assert result["spec"]["suspend"] is True


async def test_the_default_local_queue_is_not_used_in_an_unmanaged_namespace(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    lookup.default_queues.add("kueue-system")
    client = await make_client(WebhookSettings(kuota_namespace="kueue-system"))
    sent = job(namespace="kueue-system")
    response = await post_review(client, MUTATE, admission_review(sent))
    assert "patch" not in response


async def test_manage_jobs_without_queue_name_suspends_in_managed_namespaces_only(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    lookup.namespaces["batch"] = {"kubernetes.io/metadata.name": "batch", "kuota": "on"}
    lookup.namespaces["other"] = {"kubernetes.io/metadata.name": "other"}
    settings = WebhookSettings(
        manage_jobs_without_queue_name=True,
        managed_jobs_namespace_selector={"matchLabels": {"kuota": "on"}},
    )
    client = await make_client(settings)
    managed = job(namespace="batch")
    result = applied(managed, await post_review(client, MUTATE, admission_review(managed)))
    assert result["spec"]["suspend"] is True and "labels" not in result["metadata"]
    response = await post_review(client, MUTATE, admission_review(job(namespace="other")))
    assert "patch" not in response


async def test_a_failed_lookup_suspends_managed_jobs_and_leaves_others_with_a_warning(
    make_client: ClientFactory,
) -> None:
    failing = StaticLookup(failing=True)
    plain = await make_client(lookup=failing)
    response = await post_review(plain, MUTATE, admission_review(job()))
    assert response["allowed"] is True and "patch" not in response
    assert "could not look up namespace 'team-a'" in response["warnings"][0]
    managing = await make_client(
        WebhookSettings(manage_jobs_without_queue_name=True), lookup=failing
    )
    response = await post_review(managing, MUTATE, admission_review(job()))
    assert patch_of(response) == [{"op": "replace", "path": "/spec/suspend", "value": True}]


async def test_a_child_of_a_managed_job_set_is_left_to_its_owner(
    webhook: Any, lookup: StaticLookup
) -> None:
    owner = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "team-a", "uid": "u-1", "labels": {QUEUE: "q"}},
    }
    lookup.objects[("jobset.x-k8s.io/v1alpha2", "JobSet", "team-a", "js")] = owner
    reference = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "name": "js",
        "uid": "u-1",
        "controller": True,
    }
    child = job(labels={QUEUE: "q"}, ownerReferences=[reference])
    response = await post_review(webhook, MUTATE, admission_review(child))
    assert "patch" not in response
    stale = job(labels={QUEUE: "q"}, ownerReferences=[{**reference, "uid": "another"}])
    assert (
        applied(stale, await post_review(webhook, MUTATE, admission_review(stale)))["spec"][
            "suspend"
        ]
        is True
    )


async def test_an_unreadable_owner_denies_the_request(make_client: ClientFactory) -> None:
    client = await make_client(lookup=StaticLookup(failing=True))
    reference = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "parent",
        "uid": "u",
        "controller": True,
    }
    response = await post_review(
        client, MUTATE, admission_review(job(labels={QUEUE: "q"}, ownerReferences=[reference]))
    )
    assert response["allowed"] is False
    assert (
        response["status"]["code"] == 500
        and "cannot read owner Job team-a/parent" in response["status"]["message"]
    )


async def test_a_job_being_deleted_and_updates_are_not_mutated(webhook: Any) -> None:
    deleting = job(labels={QUEUE: "q"}, deletionTimestamp="2025-01-01T00:00:00Z")
    assert "patch" not in await post_review(webhook, MUTATE, admission_review(deleting))
    running = job(labels={QUEUE: "q"}, suspend=False)
    assert "patch" not in await post_review(
        webhook, MUTATE, admission_review(running, operation="UPDATE", old=running)
    )


async def test_a_dry_run_gets_the_same_answer(webhook: Any, lookup: StaticLookup) -> None:
    sent = job(labels={QUEUE: "q"})
    real = await post_review(webhook, MUTATE, admission_review(sent))
    dry = await post_review(webhook, MUTATE, admission_review(sent, dry_run=True))
    assert patch_of(real) == patch_of(dry)
    assert lookup.calls == 0, "a queued Job needs no lookup at all"


async def test_only_the_scheduler_may_unsuspend_a_queued_job(webhook: Any) -> None:
    held = job(labels={QUEUE: "q"}, suspend=True)
    started = job(labels={QUEUE: "q"}, suspend=False)
    response = await post_review(
        webhook, VALIDATE, admission_review(started, operation="UPDATE", old=held)
    )
    assert response["allowed"] is False
    assert response["status"]["code"] == 403 and response["status"]["reason"] == "Forbidden"
    assert response["status"]["message"] == (
        "spec.suspend: a queued job can be unsuspended only by kuota's scheduler "
        '(system:serviceaccount:kueue-system:kuota-scheduler), not by "kuota-admin"; '
        "kuota unsuspends it when its Workload is admitted"
    )
    by_scheduler = await post_review(
        webhook, VALIDATE, admission_review(started, operation="UPDATE", old=held, user=SCHEDULER)
    )
    assert by_scheduler["allowed"] is True
    unqueued = await post_review(
        webhook,
        VALIDATE,
        admission_review(job(suspend=False), operation="UPDATE", old=job(suspend=True)),
    )
    assert unqueued["allowed"] is True, "Jobs kuota does not manage are not its business"


async def test_a_queued_job_created_unsuspended_is_refused_unless_by_the_scheduler(
    webhook: Any,
) -> None:
    started = job(labels={QUEUE: "q"}, suspend=False)
    refused = await post_review(webhook, VALIDATE, admission_review(started))
    assert (
        refused["allowed"] is False
        and refused["status"]["details"]["causes"][0]["field"] == "spec.suspend"
    )
    assert (await post_review(webhook, VALIDATE, admission_review(started, user=SCHEDULER)))[
        "allowed"
    ] is True


async def test_job_rules_give_the_api_layers_messages_byte_for_byte(webhook: Any) -> None:
    bad = job(
        labels={QUEUE: "Not_A_Queue", "kueue.x-k8s.io/max-exec-time-seconds": "soon"}, suspend=True
    )
    response = await post_review(webhook, VALIDATE, admission_review(bad))
    assert response["status"] == dict(admission_status(validate_job(bad)))
    assert response["status"]["message"].startswith("metadata.labels[kueue.x-k8s.io/queue-name]: ")


async def test_removing_the_queue_name_in_a_namespace_with_a_default_queue_is_refused(
    webhook: Any, lookup: StaticLookup
) -> None:
    old, new = job(labels={QUEUE: "q"}, suspend=True), job(suspend=True)
    assert (
        await post_review(webhook, VALIDATE, admission_review(new, operation="UPDATE", old=old))
    )["allowed"] is True
    lookup.default_queues.add("team-a")
    response = await post_review(
        webhook, VALIDATE, admission_review(new, operation="UPDATE", old=old)
    )
    assert response["status"]["message"] == (
        "metadata.labels[kueue.x-k8s.io/queue-name]: must not be removed in a namespace "
        'with a "default" LocalQueue'
    )


async def test_the_queue_name_cannot_change_while_the_job_runs(webhook: Any) -> None:
    old, new = job(labels={QUEUE: "a"}, suspend=False), job(labels={QUEUE: "b"}, suspend=False)
    response = await post_review(
        webhook, VALIDATE, admission_review(new, operation="UPDATE", old=old, user=SCHEDULER)
    )
    assert response["status"]["message"] == (
        "metadata.labels[kueue.x-k8s.io/queue-name]: cannot change while the job is running "
        "(not suspended); suspend the job first"
    )


# -- namespaces kuota does not manage ------------------------------------------------------


async def test_with_manage_jobs_without_queue_name_a_selected_namespace_is_still_checked(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    lookup.namespaces["batch"] = {"kubernetes.io/metadata.name": "batch", "kuota": "on"}
    lookup.namespaces["kueue-system"] = {
        "kubernetes.io/metadata.name": "kueue-system",
        "kuota": "on",
    }
    settings = WebhookSettings(
        manage_jobs_without_queue_name=True,
        managed_jobs_namespace_selector={"matchLabels": {"kuota": "on"}},
    )
    client = await make_client(settings)
    inside = await post_review(
        client,
        VALIDATE,
        admission_review(
            job(namespace="batch"), operation="UPDATE", old=job(namespace="batch", suspend=True)
        ),
    )
    assert inside["allowed"] is False, "an unqueued Job of a managed namespace is kuota's"
    system = await post_review(client, MUTATE, admission_review(job(namespace="kueue-system")))
    assert "patch" not in system, "kuota's namespace is never managed, whatever the selector"


# -- JOB-K2: a running queued Job keeps its quota fields -----------------------------------


def resized(parallelism: int, *, suspend: bool = False) -> dict[str, Any]:
    """A queued Job of ``parallelism`` pods (no completions: a work queue)."""
    body = job(labels={QUEUE: "q"}, suspend=suspend)
    body["spec"]["parallelism"] = parallelism
    del body["spec"]["completions"]
    return body


async def test_a_running_queued_jobs_parallelism_cannot_change(webhook: Any) -> None:
    response = await post_review(
        webhook, VALIDATE, admission_review(resized(5), operation="UPDATE", old=resized(2))
    )
    assert response["allowed"] is False
    assert response["status"]["code"] == 422 and response["status"]["reason"] == "Invalid"
    assert response["status"]["message"] == (
        "spec.parallelism: cannot change while the job is admitted by kuota (its quota was "
        "reserved for 2 pods); to resize it, suspend it in the same update (spec.suspend: true), "
        "and kuota releases the quota and queues it again with the new value; a job created "
        'with the annotation kueue.x-k8s.io/elastic-job: "true" may change its size while it runs, '
        "see docs/api-differences.md#elastic-jobs"
    )


async def test_the_scheduler_and_suspended_jobs_may_change_parallelism(webhook: Any) -> None:
    by_scheduler = await post_review(
        webhook,
        VALIDATE,
        admission_review(resized(5), operation="UPDATE", old=resized(2), user=SCHEDULER),
    )
    pending = await post_review(
        webhook,
        VALIDATE,
        admission_review(
            resized(5, suspend=True), operation="UPDATE", old=resized(2, suspend=True)
        ),
    )
    stopping = await post_review(
        webhook,
        VALIDATE,
        admission_review(resized(5, suspend=True), operation="UPDATE", old=resized(2)),
    )
    assert [by_scheduler["allowed"], pending["allowed"], stopping["allowed"]] == [True] * 3


def _multikueue_cluster(lookup: StaticLookup, controller: str) -> None:
    """LocalQueue team-a/user-queue → ClusterQueue cluster-queue → check of ``controller``."""
    v1beta2 = "kueue.x-k8s.io/v1beta2"
    lookup.objects[(v1beta2, "LocalQueue", "team-a", "user-queue")] = {
        "spec": {"clusterQueue": "cluster-queue"}
    }
    lookup.objects[(v1beta2, "ClusterQueue", "", "cluster-queue")] = {
        "spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "multikueue-check"}]}}
    }
    lookup.objects[(v1beta2, "AdmissionCheck", "", "multikueue-check")] = {
        "spec": {"controllerName": controller}
    }


async def test_on_a_multikueue_manager_a_queued_job_is_managed_by_multikueue(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    _multikueue_cluster(lookup, "kueue.x-k8s.io/multikueue")
    sent = job(labels={QUEUE: "user-queue"})
    manager = await make_client(WebhookSettings(multikueue_managed_by=True))
    result = applied(sent, await post_review(manager, MUTATE, admission_review(sent)))
    assert result["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert result["spec"]["suspend"] is True
    plain = await make_client()
    calls = lookup.calls
    result = applied(sent, await post_review(plain, MUTATE, admission_review(sent)))
    assert "managedBy" not in result["spec"] and lookup.calls == calls, (
        "without --multikueue-managed-by nothing is looked up"
    )


async def test_a_queue_without_a_multikueue_check_keeps_the_job_local(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    _multikueue_cluster(lookup, "kueue.x-k8s.io/provisioning-request")
    sent = job(labels={QUEUE: "user-queue"})
    manager = await make_client(WebhookSettings(multikueue_managed_by=True))
    result = applied(sent, await post_review(manager, MUTATE, admission_review(sent)))
    assert "managedBy" not in result["spec"] and result["spec"]["suspend"] is True
