"""Elastic Jobs at the Job webhook (JOB-7, JOB-13, JOB-K2; docs/concepts.md#elastic-jobs).

A running Job annotated ``kueue.x-k8s.io/elastic-job: "true"`` may lower its
pod count (the scheduler then lowers its Workload's and frees the quota) or
raise it (the scheduler admits a new workload slice for the new size).
With the gate ``ElasticJobsViaWorkloadSlices`` off the annotation means
nothing, as in Kueue: the Job keeps its size like any other.
"""

from __future__ import annotations

from typing import Any

from webhook.settings import WebhookSettings

from .conftest import ClientFactory, post_review
from .reviews import QUEUE, admission_review, job

VALIDATE = "/validate-batch-v1-job"
ELASTIC = "kueue.x-k8s.io/elastic-job"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"


def elastic(parallelism: int, *, suspend: bool = False) -> dict[str, Any]:
    """A queued elastic Job of ``parallelism`` pods (no completions: a work queue)."""
    body = job(labels={QUEUE: "q"}, annotations={ELASTIC: "true"}, suspend=suspend)
    body["spec"]["parallelism"] = parallelism
    del body["spec"]["completions"]
    return body


async def update(client: Any, new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await post_review(
        client, VALIDATE, admission_review(new, operation="UPDATE", old=old)
    )
    return result


async def test_a_running_elastic_job_may_scale_down(webhook: Any) -> None:
    response = await update(webhook, elastic(2), elastic(5))
    assert response["allowed"] is True


async def test_a_running_elastic_job_may_scale_up(webhook: Any) -> None:
    """The scheduler admits the larger size as a new workload slice."""
    response = await update(webhook, elastic(5), elastic(2))
    assert response["allowed"] is True


async def test_suspending_an_elastic_job_to_grow_it_is_allowed(webhook: Any) -> None:
    response = await update(webhook, elastic(5, suspend=True), elastic(2))
    assert response["allowed"] is True


async def test_with_the_gate_off_an_elastic_job_keeps_its_size(
    make_client: ClientFactory,
) -> None:
    client = await make_client(
        WebhookSettings(feature_gates={"ElasticJobsViaWorkloadSlices": False})
    )
    response = await update(client, elastic(2), elastic(5))
    assert response["allowed"] is False
    assert "cannot change while the job is admitted by kuota" in response["status"]["message"]


async def test_an_elastic_job_asks_for_no_required_topology(webhook: Any) -> None:
    body = elastic(2, suspend=True)
    body["spec"]["template"].setdefault("metadata", {})["annotations"] = {REQUIRED: "rack"}
    response = await post_review(webhook, VALIDATE, admission_review(body))
    assert response["allowed"] is False
    assert response["status"]["message"] == (
        f"spec.template.metadata.annotations[{REQUIRED}]: "
        "required topology is not supported with elastic jobs"
    )


async def test_with_the_gate_off_an_elastic_job_may_ask_for_a_topology(
    make_client: ClientFactory,
) -> None:
    client = await make_client(
        WebhookSettings(feature_gates={"ElasticJobsViaWorkloadSlices": False})
    )
    body = elastic(2, suspend=True)
    body["spec"]["template"].setdefault("metadata", {})["annotations"] = {REQUIRED: "rack"}
    response = await post_review(client, VALIDATE, admission_review(body))
    assert response["allowed"] is True
