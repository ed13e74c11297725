"""JobSet mutation: a queued JobSet is suspended at creation (jobset.x-k8s.io/jobset)."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from webhook.configurations import mutating_configuration
from webhook.lookup import StaticLookup
from webhook.settings import WebhookSettings

from .conftest import ClientFactory, patch_of, post_review
from .reviews import QUEUE, admission_review

MUTATE = "/mutate-jobset-x-k8s-io-v1alpha2-jobset"
ENABLED = WebhookSettings(frameworks=("batch/job", "jobset.x-k8s.io/jobset"))


def jobset(labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train", "namespace": "team-a", "labels": labels or {}},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "template": {
                        "spec": {
                            "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}
                        }
                    },
                }
            ]
        },
    }


async def test_a_queued_jobset_is_suspended_when_the_framework_is_enabled(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = jobset({QUEUE: "user-queue"})
    response = await post_review(client, MUTATE, admission_review(sent))
    assert patch_of(response) == [{"op": "add", "path": "/spec/suspend", "value": True}]
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["spec"]["suspend"] is True
    assert result["metadata"]["labels"] == {QUEUE: "user-queue"}


async def test_an_unqueued_jobset_is_left_alone(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    response = await post_review(client, MUTATE, admission_review(jobset()))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_jobsets_are_left_alone_when_the_framework_is_not_enabled(webhook: Any) -> None:
    sent = jobset({QUEUE: "user-queue"})
    response = await post_review(webhook, MUTATE, admission_review(sent))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_the_jobset_endpoint_refuses_other_kinds(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    review = admission_review(jobset({QUEUE: "q"}), group_version_kind=("batch", "v1", "Job"))
    response = await client.post(MUTATE, json=review)
    assert response.status == 400
    assert "jobset.x-k8s.io/v1alpha2 JobSet" in await response.text()


async def test_an_unqueued_jobset_gets_the_namespaces_default_local_queue(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    lookup.default_queues.add("team-a")
    client = await make_client(ENABLED)
    sent = jobset()
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
