"""Finished pods give their quota back on a real cluster (docs/concepts.md#reclaimable-pods).

A Job of parallelism 2 and completions 4 holds the whole 2-CPU ClusterQueue; a
second Job waits.  The test plays the kubelet for the first Job's pods (their
kwok completion is 10 minutes away): it marks them ``Succeeded`` one at a
time, and the real Job controller counts them and starts the next ones.  With
one or two pods done, both parallel slots still have work; with three done,
one pod is left to run, so kuota writes ``status.reclaimablePods: [{main: 1}]``
on the first Job's Workload, as Kueue's Job controller does (server-side apply
as ``kueue-reclaimable-pods``), and the freed CPU admits the waiting Job while
the first one still runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from kubernetes_asyncio import client

from .kuota_scheduler import SchedulerReplica
from .test_scheduler import GROUP, VERSION, condition, flavor, job, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster


@pytest.fixture
async def two_cpus(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    custom = client.CustomObjectsApi(api)
    names = {"flavor": f"ondemand-{namespace}", "cq": f"two-cpus-{namespace}"}
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(names["flavor"], {"instance-type": "ondemand"})
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": names["cq"]},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": names["flavor"],
                                "resources": [{"name": "cpu", "nominalQuota": "2"}],
                            }
                        ],
                    }
                ],
            },
        },
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": names["cq"]},
        },
    )
    yield names["cq"]
    batch = client.BatchV1Api(api)
    for item in (await batch.list_namespaced_job(namespace)).items:
        await batch.delete_namespaced_job(
            item.metadata.name, namespace, propagation_policy="Background"
        )
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", names["cq"])
    await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", names["flavor"])


def reserved(workload: dict[str, Any] | None) -> bool:
    return (condition(workload or {}, "QuotaReserved") or {}).get("status") == "True"


def reclaimable(workload: dict[str, Any] | None) -> list[dict[str, Any]]:
    return list(((workload or {}).get("status") or {}).get("reclaimablePods") or [])


async def running_pods(core: client.CoreV1Api, namespace: str, job_name: str) -> list[Any]:
    pods = await core.list_namespaced_pod(
        namespace, label_selector=f"batch.kubernetes.io/job-name={job_name}"
    )
    return sorted(
        (pod for pod in pods.items if pod.status.phase == "Running"),
        key=lambda pod: pod.metadata.name,
    )


async def finish_one(core: client.CoreV1Api, namespace: str, job_name: str) -> None:
    """What a kubelet reports when a pod's container exits 0: the first running pod."""
    pods = await eventually(
        lambda: running_pods(core, namespace, job_name),
        lambda found: len(found) > 0,
        timeout=60,
        what=f"a running pod of {job_name}",
    )
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    pod = pods[0]
    await core.patch_namespaced_pod_status(
        pod.metadata.name,
        namespace,
        {
            "status": {
                "phase": "Succeeded",
                "containerStatuses": [
                    {
                        "name": container.name,
                        "image": container.image,
                        "imageID": "",
                        "ready": False,
                        "restartCount": 0,
                        "started": False,
                        "state": {
                            "terminated": {
                                "exitCode": 0,
                                "reason": "Completed",
                                "startedAt": now,
                                "finishedAt": now,
                            }
                        },
                    }
                    for container in pod.spec.containers
                ],
            }
        },
    )


async def test_a_parallel_jobs_finished_pods_free_their_quota_for_a_waiting_job(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, two_cpus: str
) -> None:
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    wide = job("wide", "user-queue", delay="600s", tolerate_spot=False)
    wide["spec"].update(parallelism=2, completions=4)
    await batch.create_namespaced_job(namespace, wide)

    async def workloads() -> dict[str, dict[str, Any]]:
        return await workloads_of(api, namespace)

    await eventually(
        lambda: running_pods(core, namespace, "wide"),
        lambda pods: len(pods) == 2,
        timeout=60,
        what="both pods of wide running",
    )
    await batch.create_namespaced_job(
        namespace, job("next", "user-queue", delay="600s", tolerate_spot=False)
    )
    waiting = await eventually(
        workloads,
        lambda got: (
            (condition(got.get("next") or {}, "QuotaReserved") or {}).get("status") == "False"
        ),
        timeout=30,
        what="next waiting for quota",
    )
    assert reserved(waiting["wide"]) and not reclaimable(waiting["wide"])

    for done in (1, 2):
        await finish_one(core, namespace, "wide")
        await eventually(
            lambda: batch.read_namespaced_job("wide", namespace),
            lambda read, done=done: (
                (read.status.succeeded or 0) == done and (read.status.active or 0) == 2
            ),
            timeout=60,
            what=f"wide: {done} succeeded and a new pod started",
        )
        now = await workloads()
        assert not reclaimable(now["wide"]), "the work left still fills both slots"
        assert not reserved(now["next"])

    await finish_one(core, namespace, "wide")
    freed = await eventually(
        workloads,
        lambda got: reserved(got.get("next")),
        timeout=60,
        what="next admitted on the CPU wide no longer needs",
    )
    assert reclaimable(freed["wide"]) == [{"name": "main", "count": 1}]
    assert reserved(freed["wide"]), "wide keeps the quota of the pod still running"
    managers = {
        entry["manager"]
        for entry in freed["wide"]["metadata"].get("managedFields") or []
        if "f:reclaimablePods" in str(entry.get("fieldsV1"))
    }
    assert managers == {"kueue-reclaimable-pods"}
    wide_now = await batch.read_namespaced_job("wide", namespace)
    assert (wide_now.status.succeeded, wide_now.status.active) == (3, 1)
    assert (await batch.read_namespaced_job("next", namespace)).spec.suspend is False
