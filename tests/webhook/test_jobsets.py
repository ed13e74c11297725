"""JobSet admission (jobset.x-k8s.io/jobset): a queued JobSet is suspended at creation, and
validated on create and update by the rules Kueue's JobSet webhook applies
(docs/validation.md#jobs)."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from scheduler.api.pipeline import review
from scheduler.api.validation import admission_status
from scheduler.jobs.jobset import validate_jobset
from tests.builders import container, jobset
from webhook.configurations import mutating_configuration, validating_configuration
from webhook.lookup import StaticLookup
from webhook.settings import WebhookSettings

from .conftest import ClientFactory, patch_of, post_review
from .reviews import QUEUE, SCHEDULER, admission_review

MUTATE = "/mutate-jobset-x-k8s-io-v1alpha2-jobset"
VALIDATE = "/validate-jobset-x-k8s-io-v1alpha2-jobset"
PRIORITY = "kueue.x-k8s.io/priority-class"
ENABLED = WebhookSettings(frameworks=("batch/job", "jobset.x-k8s.io/jobset"))


def train() -> jobset:
    """JobSet ``train`` in ``team-a`` as a user sends it: no labels, no ``suspend``, one
    replicated job ``workers``."""
    return (
        jobset("train", "team-a")
        .labels()
        .suspend(None)
        .replicated_job("workers", replicas=None)
        .containers(container(image="i", resources=False))
    )


async def test_a_queued_jobset_is_suspended_when_the_framework_is_enabled(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = train().queue("user-queue").build()
    response = await post_review(client, MUTATE, admission_review(sent))
    assert patch_of(response) == [{"op": "add", "path": "/spec/suspend", "value": True}]
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["spec"]["suspend"] is True
    assert result["metadata"]["labels"] == {QUEUE: "user-queue"}


async def test_an_unqueued_jobset_is_left_alone(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    response = await post_review(client, MUTATE, admission_review(train().build()))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_jobsets_are_left_alone_when_the_framework_is_not_enabled(webhook: Any) -> None:
    sent = train().queue("user-queue").build()
    response = await post_review(webhook, MUTATE, admission_review(sent))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_the_jobset_endpoint_refuses_other_kinds(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    review = admission_review(train().queue("q").build(), group_version_kind=("batch", "v1", "Job"))
    response = await client.post(MUTATE, json=review)
    assert response.status == 400
    assert "jobset.x-k8s.io/v1alpha2 JobSet" in await response.text()


async def test_an_unqueued_jobset_gets_the_namespaces_default_local_queue(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    lookup.default_queues.add("team-a")
    client = await make_client(ENABLED)
    sent = train().build()
    response = await post_review(client, MUTATE, admission_review(sent))
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["metadata"]["labels"] == {QUEUE: "default"}
    assert result["spec"]["suspend"] is True


def test_jobsets_are_registered_queued_and_unqueued_in_managed_namespaces_only() -> None:
    entries = {
        entry["name"]: entry
        for entry in mutating_configuration({"url": "https://127.0.0.1:9443"})["webhooks"]
    }
    for name, policy in (
        ("queued-jobsets.mutate.kuota.io", "Fail"),
        ("unqueued-jobsets.mutate.kuota.io", "Ignore"),
    ):
        entry = entries[name]
        assert entry["clientConfig"]["url"] == f"https://127.0.0.1:9443{MUTATE}"
        assert entry["rules"][0]["apiGroups"] == ["jobset.x-k8s.io"]
        assert entry["rules"][0]["resources"] == ["jobsets"]
        assert entry["failurePolicy"] == policy
        assert (
            entry["namespaceSelector"]
            == entries["queued-jobs.mutate.kuota.io"]["namespaceSelector"]
        )


async def test_a_jobset_with_an_invalid_queue_name_is_refused_with_the_job_message(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    bad = train().queue("Team_A").suspend().build()
    response = await post_review(client, VALIDATE, admission_review(bad))
    assert response["allowed"] is False
    assert response["status"] == dict(admission_status(validate_jobset(bad)))
    assert response["status"]["message"].startswith(
        'metadata.labels[kueue.x-k8s.io/queue-name]: "Team_A" is not a valid LocalQueue name'
    )


async def test_the_queue_name_of_a_running_jobset_cannot_change(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    old = train().queue("a").suspend(False).build()
    moved = train().queue("b").suspend(False).build()
    response = await post_review(
        client, VALIDATE, admission_review(moved, operation="UPDATE", old=old, user=SCHEDULER)
    )
    assert response["allowed"] is False
    assert response["status"]["message"] == (
        "metadata.labels[kueue.x-k8s.io/queue-name]: cannot change while the job is running "
        "(not suspended); suspend the job first"
    )
    # While suspended, moving it to another LocalQueue is allowed.
    held, held_moved = train().queue("a").suspend().build(), train().queue("b").suspend().build()
    response = await post_review(
        client, VALIDATE, admission_review(held_moved, operation="UPDATE", old=held)
    )
    assert response["allowed"] is True


async def test_priority_class_label_rules_of_a_jobset(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    running = train().queue("a").suspend(False).build()
    added = train().labels({QUEUE: "a", PRIORITY: "high"}).suspend(False).build()
    response = await post_review(
        client, VALIDATE, admission_review(added, operation="UPDATE", old=running, user=SCHEDULER)
    )
    assert response["status"]["message"] == (
        "metadata.labels[kueue.x-k8s.io/priority-class]: a WorkloadPriorityClass cannot be "
        "added to a running (not suspended) job"
    )
    held, held_removed = (
        train().labels({QUEUE: "a", PRIORITY: "high"}).suspend().build(),
        train().queue("a").suspend().build(),
    )
    response = await post_review(
        client, VALIDATE, admission_review(held_removed, operation="UPDATE", old=held)
    )
    assert response["status"]["message"] == (
        "metadata.labels[kueue.x-k8s.io/priority-class]: a WorkloadPriorityClass cannot be "
        "removed from a job; change it to another class instead"
    )
    changed = train().labels({QUEUE: "a", PRIORITY: "low"}).suspend(False).build()
    running_high = train().labels({QUEUE: "a", PRIORITY: "high"}).suspend(False).build()
    response = await post_review(
        client,
        VALIDATE,
        admission_review(changed, operation="UPDATE", old=running_high, user=SCHEDULER),
    )
    assert response["allowed"] is True


async def test_only_the_scheduler_may_unsuspend_a_queued_jobset(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    held, started = train().queue("a").suspend().build(), train().queue("a").suspend(False).build()
    response = await post_review(
        client, VALIDATE, admission_review(started, operation="UPDATE", old=held)
    )
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert "can be unsuspended only by kuota's scheduler" in response["status"]["message"]
    response = await post_review(
        client, VALIDATE, admission_review(started, operation="UPDATE", old=held, user=SCHEDULER)
    )
    assert response["allowed"] is True


async def test_job_only_annotations_are_not_checked_on_a_jobset(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = train().queue("a").suspend().build()
    sent["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "many"}
    response = await post_review(client, VALIDATE, admission_review(sent))
    assert response["allowed"] is True


async def test_jobsets_are_not_validated_when_the_framework_is_not_enabled(webhook: Any) -> None:
    response = await post_review(
        webhook, VALIDATE, admission_review(train().queue("Bad_").suspend().build())
    )
    assert response["allowed"] is True


def test_kuota_validate_checks_a_jobset_like_the_webhook() -> None:
    checked = review(train().queue("Bad_").suspend().build(), default_namespace="default")
    assert [item.rule for item in checked.errors] == ["JOB-1"]
    assert review(train().queue("a").suspend().build()).valid


def test_jobsets_are_validated_where_they_are_mutated() -> None:
    entries = {
        entry["name"]: entry
        for entry in validating_configuration({"url": "https://127.0.0.1:9443"})["webhooks"]
    }
    entry = entries["queued-jobsets.validate.kuota.io"]
    assert entry["clientConfig"]["url"] == f"https://127.0.0.1:9443{VALIDATE}"
    assert entry["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert entry["rules"][0]["resources"] == ["jobsets"]
    assert entry["failurePolicy"] == "Fail"
    assert (
        entry["namespaceSelector"] == entries["queued-jobs.validate.kuota.io"]["namespaceSelector"]
    )
