"""An elastic Job resized while it runs, on the local cluster (docs/concepts.md#elastic-jobs).

A Job annotated ``kueue.x-k8s.io/elastic-job: "true"`` that scales down
keeps running on its admission; its Workload's count follows, and the quota
of the pods it gave up goes to a Job that was waiting for it.  Scaling it up
while it runs is refused by the webhook with a message that names the
annotation and docs/api-differences.md (kuota does not admit workload slices
yet), and the Job keeps running as it was.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from .fixtures import ClusterHandle
from .kuota_scheduler import SchedulerReplica
from .test_job_edits import Pool, condition, cpu_job, kubectl, pods_of, reserved
from .waiting import eventually

pytestmark = pytest.mark.cluster
ELASTIC = "kueue.x-k8s.io/elastic-job"


@pytest.fixture
async def pool(api: client.ApiClient, namespace: str) -> AsyncIterator[Pool]:
    created = Pool(api, namespace)
    yield created
    await created.delete()


def elastic_job(name: str, parallelism: int) -> dict[str, Any]:
    """A queued elastic work-queue Job of ``parallelism`` 1-CPU pods that run 10 minutes."""
    body = cpu_job(name, parallelism=parallelism, completions=100)
    body["metadata"]["annotations"] = {ELASTIC: "true"}
    return body


async def running_pods(api: client.ApiClient, namespace: str, job_name: str) -> int:
    return sum(
        1
        for pod in await pods_of(api, namespace, job_name)
        if pod.status is not None and pod.status.phase == "Running"
    )


async def test_a_running_elastic_job_scaled_down_frees_quota_and_cannot_scale_up(
    cluster: ClusterHandle,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    pool: Pool,
) -> None:
    await pool.create(ondemand_cpu="4", spot_cpu="0")
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, elastic_job("elastic", 4))
    admitted = await pool.admitted_on("elastic")
    assert admitted["metadata"]["annotations"][ELASTIC] == "true"
    await eventually(
        lambda: running_pods(api, namespace, "elastic"),
        lambda count: count == 4,
        timeout=90,
        what="the elastic Job's 4 pods running",
    )
    await batch.create_namespaced_job(namespace, cpu_job("waiting", parallelism=2, completions=2))
    await eventually(
        lambda: pool.workload("waiting"),
        lambda wl: wl is not None and condition(wl, "QuotaReserved").get("status") == "False",
        timeout=60,
        what="the waiting Job's Workload pending",
    )

    # Scale down: accepted; the Workload follows in place and the waiting Job gets the quota.
    patched = kubectl(
        cluster, namespace, "patch", "job", "elastic", "--type=merge", "-p",
        '{"spec":{"parallelism":2}}',
    )  # fmt: skip
    assert patched.returncode == 0, patched.stderr
    await pool.admitted_on("waiting")
    scaled = await pool.workload("elastic")
    assert scaled is not None and reserved(scaled), "the elastic Job keeps its admission"
    assert scaled["metadata"]["uid"] == admitted["metadata"]["uid"], "the same Workload"
    assert scaled["spec"]["podSets"][0]["count"] == 2
    await eventually(
        pool.reservation,
        lambda got: got.get(pool.ondemand) == "4",
        timeout=30,
        what="the ClusterQueue reporting 2 + 2 CPUs reserved",
    )
    job = await batch.read_namespaced_job("elastic", namespace)
    assert job.spec.suspend is False, "the elastic Job keeps running"
    await eventually(
        lambda: running_pods(api, namespace, "elastic"),
        lambda count: count == 2,
        timeout=90,
        what="the elastic Job down to 2 running pods",
    )

    # Scale up: refused, naming the annotation and the docs; the Job runs on as it was.
    grown = kubectl(
        cluster, namespace, "patch", "job", "elastic", "--type=merge", "-p",
        '{"spec":{"parallelism":3}}',
    )  # fmt: skip
    assert grown.returncode != 0
    assert (
        f'spec.parallelism: a running elastic job ({ELASTIC}: "true") may scale down, not up'
        in grown.stderr
    ), grown.stderr
    assert "docs/api-differences.md#elastic-jobs" in grown.stderr
    job = await batch.read_namespaced_job("elastic", namespace)
    assert (job.spec.parallelism, job.spec.suspend) == (2, False)
    still = await pool.workload("elastic")
    assert still is not None and reserved(still) and still["spec"]["podSets"][0]["count"] == 2
