"""The ``kuota`` user commands against complete kuota on the local cluster.

A user with a kubeconfig runs ``kuota status``, ``kuota list workloads`` and
``kuota explain`` as commands (real subprocesses, real API server): one
flavor with 2 CPUs of quota, three 1-CPU Jobs, two admitted and one waiting,
and what the user reads names the waiting Job's resource, flavor and the
amount missing."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from .fixtures import ClusterHandle
from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
REPO_ROOT = Path(__file__).resolve().parents[1]


def job(name: str, queue: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "300s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}},
                        }
                    ],
                },
            },
        },
    }


@pytest.fixture
async def small_pool(api: client.ApiClient, namespace: str) -> AsyncIterator[tuple[str, str]]:
    """(flavor, ClusterQueue), both named after the test's namespace: 2 CPUs on demand."""
    custom = client.CustomObjectsApi(api)
    flavor, queue = f"ondemand-{namespace}", f"small-pool-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "resourceflavors",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ResourceFlavor",
            "metadata": {"name": flavor},
            "spec": {"nodeLabels": {"instance-type": "ondemand"}},
        },
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": queue},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": flavor, "resources": [{"name": "cpu", "nominalQuota": "2"}]}
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
            "spec": {"clusterQueue": queue},
        },
    )
    yield flavor, queue
    batch = client.BatchV1Api(api)
    for item in (await batch.list_namespaced_job(namespace)).items:
        await batch.delete_namespaced_job(
            item.metadata.name, namespace, propagation_policy="Background"
        )
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", queue)
    await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor)


async def kuota(cluster: ClusterHandle, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``kuota`` command as a user runs it, with the cluster's kubeconfig."""
    command = [
        sys.executable,
        "-m",
        "scheduler.cli.main",
        *args,
        "--kubeconfig",
        str(cluster.kubeconfig),
    ]
    return await asyncio.to_thread(
        subprocess.run, command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60
    )


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next(
        (c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None
    )


async def test_status_list_and_explain_tell_a_user_why_a_job_waits(
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    small_pool: tuple[str, str],
) -> None:
    flavor, queue = small_pool
    batch, custom = client.BatchV1Api(api), client.CustomObjectsApi(api)
    for name in ("first", "second", "third"):
        await batch.create_namespaced_job(namespace, job(name, "user-queue"))

    async def workloads() -> list[dict[str, Any]]:
        return (await custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "workloads"))[
            "items"
        ]

    def settled(items: list[dict[str, Any]]) -> bool:
        admitted = [w for w in items if (condition(w, "Admitted") or {}).get("status") == "True"]
        waiting = [
            w
            for w in items
            if "more needed" in ((condition(w, "QuotaReserved") or {}).get("message") or "")
        ]
        return len(admitted) == 2 and len(waiting) == 1

    items = await eventually(
        workloads, settled, timeout=60, what="2 Jobs admitted and 1 waiting for quota"
    )
    (waiting,) = [w for w in items if (condition(w, "Admitted") or {}).get("status") != "True"]
    waiting_job = waiting["metadata"]["ownerReferences"][0]["name"]
    holders = sorted({"first", "second", "third"} - {waiting_job})

    status = await kuota(cluster, "status")
    assert status.returncode == 0, status.stderr
    block = status.stdout.split(f"ClusterQueue {queue}  ", 1)[1].split("\n\n", 1)[0]
    assert block.startswith("pending 1  admitted 2"), status.stdout
    assert f"{flavor}  cpu       [####################]   2/2 (100%)" in block, status.stdout
    assert f"LocalQueues: {namespace}/user-queue" in block

    listed = await kuota(cluster, "list", "workloads", "-n", namespace)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:]}
    assert rows[waiting["metadata"]["name"]].split()[1:5] == ["user-queue", queue, "Pending", "-"]
    assert rows[waiting["metadata"]["name"]].endswith(
        f"insufficient unused quota for cpu in flavor {flavor}, 1 more needed"
    )
    admitted_rows = [row for name, row in rows.items() if name != waiting["metadata"]["name"]]
    assert [row.split()[3:5] for row in admitted_rows] == [["Admitted", f"main[cpu={flavor}]"]] * 2

    explained = await kuota(cluster, "explain", waiting_job, "-n", namespace)
    assert explained.returncode == 0, explained.stderr
    lines = explained.stdout.splitlines()
    assert lines[0] == f"Job {namespace}/{waiting_job} (Workload {waiting['metadata']['name']}):"
    assert lines[1] == f"It is pending in LocalQueue user-queue -> ClusterQueue {queue}."
    assert (
        lines[2]
        == f"Position: 1 of 1 pending in ClusterQueue {queue} (queue order: priority, then age)."
    )
    assert lines[3] == (
        "Why (WaitingForQuota): couldn't assign flavors to pod set main: insufficient unused "
        f"quota for cpu in flavor {flavor}, 1 more needed"
    )
    assert lines[4:] == [
        "To be admitted, this has to free up:",
        f"  - 1 cpu in flavor {flavor} (in use: 2 of 2); held by job/{holders[0]} (1), "
        f"job/{holders[1]} (1)",
    ]

    admitted = await kuota(cluster, "explain", f"job/{holders[0]}", "-n", namespace)
    assert admitted.returncode == 0, admitted.stderr
    assert admitted.stdout.splitlines()[1].startswith(
        f"It is admitted in ClusterQueue {queue} since "
    )
    assert admitted.stdout.splitlines()[2] == f"Flavors: main[cpu={flavor}]"

    missing = await kuota(cluster, "explain", "no-such-job", "-n", namespace)
    assert missing.returncode == 1
    assert missing.stderr.startswith(f"error: Job no-such-job not found in namespace {namespace}")


async def test_stop_and_resume_hold_and_release_the_queue_and_a_job(
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    small_pool: tuple[str, str],
) -> None:
    """``kuota stop``/``resume`` write through the user's kubeconfig; the scheduler acts."""
    _, queue = small_pool
    batch, custom = client.BatchV1Api(api), client.CustomObjectsApi(api)
    await batch.create_namespaced_job(namespace, job("running", "user-queue"))

    async def suspended() -> bool | None:
        return (await batch.read_namespaced_job("running", namespace)).spec.suspend

    await eventually(suspended, lambda s: s is False, timeout=60, what="the Job started")

    async def reserving() -> int:
        cq = await custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", queue)
        return int(cq.get("status", {}).get("reservingWorkloads") or 0)

    # The confirmation counts from the ClusterQueue's status, written a moment after the Job starts.
    await eventually(reserving, lambda n: n == 1, timeout=60, what="the queue's status counted it")
    asked = await kuota(cluster, "stop", "clusterqueue", queue)  # stdin is empty: no answer
    assert asked.returncode == 1 and "canceled: nothing changed" in asked.stdout
    assert "Its 1 admitted Workload(s) are evicted" in asked.stdout
    stopped = await kuota(cluster, "stop", "clusterqueue", queue, "--yes")
    assert stopped.returncode == 0, stopped.stderr
    assert (
        stopped.stdout.splitlines()[-1]
        == f"clusterqueue/{queue} stopped (stopPolicy: HoldAndDrain)"
    )
    await eventually(suspended, lambda s: s is True, timeout=60, what="the Job drained")
    resumed = await kuota(cluster, "resume", "cq", queue)
    assert resumed.returncode == 0, resumed.stderr
    await eventually(suspended, lambda s: s is False, timeout=60, what="the Job admitted again")

    held = await kuota(cluster, "stop", "job", "running", "-n", namespace, "-y")
    assert held.returncode == 0, held.stderr

    async def active() -> bool:
        items = (
            await custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "workloads")
        )["items"]
        return bool(items[0]["spec"].get("active", True))

    assert await active() is False
    await eventually(suspended, lambda s: s is True, timeout=60, what="the stopped Job suspended")
    again = await kuota(cluster, "resume", "job", "running", "-n", namespace)
    assert again.returncode == 0 and await active() is True
    await eventually(suspended, lambda s: s is False, timeout=60, what="the Job running again")
    nothing = await kuota(cluster, "resume", "job", "running", "-n", namespace)
    assert nothing.stdout.startswith(f"workload/{namespace}/") and "nothing to do" in nothing.stdout
