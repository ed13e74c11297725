"""An elastic Job resized while it runs, on the local cluster (docs/concepts.md#elastic-jobs).

A Job annotated ``kueue.x-k8s.io/elastic-job: "true"`` that scales down
keeps running on its admission; its Workload's count follows, and the quota
of the pods it gave up goes to a Job that was waiting for it.  Scaled up
while the quota is full, it gets a new workload slice that waits, and its
new pod waits behind the ``kueue.x-k8s.io/elastic-job`` scheduling gate;
once quota frees, the new slice takes the old one's over (the old one
finishes as ``WorkloadSliceReplaced``) and the pod starts.
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
REPLACES = "kueue.x-k8s.io/workload-slice-replacement-for"
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"


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


async def test_a_running_elastic_job_scales_down_then_up_through_a_new_slice(
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

    # Scale up while the quota is full: a new slice waits, the new pod waits behind its gate.
    grown = kubectl(
        cluster, namespace, "patch", "job", "elastic", "--type=merge", "-p",
        '{"spec":{"parallelism":3}}',
    )  # fmt: skip
    assert grown.returncode == 0, grown.stderr
    old_key = f"{namespace}/{scaled['metadata']['name']}"
    new_slice = await eventually(
        lambda: replacement_of(pool, old_key),
        lambda found: (
            found is not None and condition(found, "QuotaReserved").get("status") == "False"
        ),
        timeout=60,
        what="a new slice for 3 pods, pending",
    )
    assert new_slice is not None and new_slice["spec"]["podSets"][0]["count"] == 3
    await eventually(
        lambda: gated_pods(api, namespace, "elastic"),
        lambda count: count == 1,
        timeout=60,
        what="the third pod waiting behind the elastic-job gate",
    )
    assert await running_pods(api, namespace, "elastic") == 2
    job = await batch.read_namespaced_job("elastic", namespace)
    assert job.spec.suspend is False, "the elastic Job keeps running meanwhile"

    # The waiting Job goes: the new slice takes the old one's quota over, the pod starts.
    await batch.delete_namespaced_job("waiting", namespace, propagation_policy="Foreground")
    replaced = await eventually(
        lambda: pool.custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, "workloads", scaled["metadata"]["name"]
        ),
        lambda wl: condition(wl, "Finished").get("reason") == "WorkloadSliceReplaced",
        timeout=60,
        what="the old slice finished as replaced",
    )
    assert condition(replaced, "Finished").get("status") == "True"
    await eventually(
        lambda: replacement_of(pool, old_key),
        lambda found: found is not None and reserved(found),
        timeout=60,
        what="the new slice admitted",
    )
    await eventually(
        lambda: running_pods(api, namespace, "elastic"),
        lambda count: count == 3,
        timeout=90,
        what="the elastic Job's 3 pods running",
    )
    await eventually(
        pool.reservation,
        lambda got: got.get(pool.ondemand) == "3",
        timeout=30,
        what="the ClusterQueue reporting 3 CPUs reserved, the old slice's not counted twice",
    )


async def replacement_of(pool: Pool, old_key: str) -> dict[str, Any] | None:
    """The Workload that names ``old_key`` as the slice it replaces, if any."""
    listed = await pool.custom.list_namespaced_custom_object(
        GROUP, VERSION, pool.namespace, "workloads"
    )
    for item in listed["items"]:
        annotations = item["metadata"].get("annotations") or {}
        if annotations.get(REPLACES) == old_key:
            return dict(item)
    return None


async def gated_pods(api: client.ApiClient, namespace: str, job_name: str) -> int:
    return sum(
        1
        for pod in await pods_of(api, namespace, job_name)
        if any(gate.name == ELASTIC for gate in (pod.spec.scheduling_gates or []))
    )
