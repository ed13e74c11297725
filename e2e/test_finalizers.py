"""Deleting queues and flavors on the local cluster: the finalizer goes when nothing holds it.

The webhook puts ``kueue.x-k8s.io/resource-in-use`` on every ClusterQueue and
ResourceFlavor; the scheduler (running with the chart's permissions only)
removes it from a deleted ClusterQueue as soon as no Workload holds quota in
it, and from a deleted ResourceFlavor once no ClusterQueue names it.  Timings
are measured with ``kubectl delete``, which waits for the object to be gone.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any, cast

import pytest
from kubernetes_asyncio import client

from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_scheduler import SchedulerReplica
from .test_scheduler import GROUP, VERSION, condition, flavor, job, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster
FINALIZER = "kueue.x-k8s.io/resource-in-use"
DELETE_BOUND_SECONDS = 10.0
"""A deletion that nothing holds returns within this (measured: about 1 s; see the report
of each run, ``-s``).  It covers one watch event and one scheduler turn, with margin for
two shared cores."""
STILL_THERE_SECONDS = 3.0
"""How long a held object is watched to stay (three idle turns of the scheduler)."""


def kubectl(
    cluster: ClusterHandle, *args: str, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    binary: Path = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    return subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def timed_delete(cluster: ClusterHandle, kind: str, name: str) -> float:
    """``kubectl delete KIND NAME`` (it waits until the object is gone); the seconds it took."""
    started = time.monotonic()
    done = kubectl(cluster, "delete", kind, name, "--timeout=60s")
    elapsed = time.monotonic() - started
    assert done.returncode == 0, f"kubectl delete {kind} {name}: {done.stdout}{done.stderr}"
    print(f"\n[measured] kubectl delete {kind} {name}: {elapsed:.2f}s")
    return elapsed


def get(cluster: ClusterHandle, kind: str, name: str) -> dict[str, Any] | None:
    done = kubectl(cluster, "get", kind, name, "-o", "json", "--ignore-not-found")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def cluster_queue(name: str, flavor_name: str, cpu: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": flavor_name, "resources": [{"name": "cpu", "nominalQuota": cpu}]}
                    ],
                }
            ],
        },
    }


async def create_queues(
    api: client.ApiClient, namespace: str, *, cq: str, flavor_name: str
) -> dict[str, Any]:
    custom = client.CustomObjectsApi(api)
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(flavor_name, {"instance-type": "ondemand"})
    )
    created: dict[str, Any] = await custom.create_cluster_custom_object(
        GROUP, VERSION, "clusterqueues", cluster_queue(cq, flavor_name)
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
            "spec": {"clusterQueue": cq},
        },
    )
    return created


async def create_job(api: client.ApiClient, namespace: str, body: dict[str, Any]) -> None:
    await client.BatchV1Api(api).create_namespaced_job(namespace, cast(Any, body))


async def stays(cluster: ClusterHandle, kind: str, name: str) -> dict[str, Any]:
    """The object is still there, being deleted, with kuota's finalizer, for a while."""
    deadline = time.monotonic() + STILL_THERE_SECONDS
    while True:
        obj = get(cluster, kind, name)
        assert obj is not None, f"{kind} {name} went while it was still in use"
        assert obj["metadata"].get("deletionTimestamp"), obj["metadata"]
        assert FINALIZER in obj["metadata"].get("finalizers", [])
        if time.monotonic() > deadline:
            return obj
        await asyncio.sleep(0.5)


async def test_deleting_an_unused_cluster_queue_returns_within_seconds(
    kuota_scheduler: SchedulerReplica, cluster: ClusterHandle, api: client.ApiClient, namespace: str
) -> None:
    cq, flavor_name = f"unused-{namespace}", f"ondemand-{namespace}"
    created = await create_queues(api, namespace, cq=cq, flavor_name=flavor_name)
    assert created["metadata"]["finalizers"] == [FINALIZER], "the webhook puts it on at creation"

    assert timed_delete(cluster, "clusterqueue", cq) < DELETE_BOUND_SECONDS
    assert get(cluster, "clusterqueue", cq) is None
    assert timed_delete(cluster, "resourceflavor", flavor_name) < DELETE_BOUND_SECONDS


async def test_a_cluster_queue_with_an_admitted_workload_stays_until_the_workload_ends(
    kuota_scheduler: SchedulerReplica, cluster: ClusterHandle, api: client.ApiClient, namespace: str
) -> None:
    """The admitted Job runs until the test deletes it, so no timing decides the outcome."""
    cq, flavor_name = f"busy-{namespace}", f"ondemand-{namespace}"
    await create_queues(api, namespace, cq=cq, flavor_name=flavor_name)
    await create_job(
        api, namespace, job("running", "user-queue", delay="600s", tolerate_spot=False)
    )

    def reserved(workloads: dict[str, dict[str, Any]], name: str) -> bool:
        return (condition(workloads.get(name, {}), "QuotaReserved") or {}).get("status") == "True"

    await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: reserved(got, "running"),
        timeout=60,
        what="the Job's Workload admitted",
    )
    done = kubectl(cluster, "delete", "clusterqueue", cq, "--wait=false")
    assert done.returncode == 0, done.stderr

    held = await stays(cluster, "clusterqueue", cq)
    await create_job(api, namespace, job("late", "user-queue", delay="1s", tolerate_spot=False))
    terminating = await eventually(
        lambda: asyncio.to_thread(get, cluster, "clusterqueue", cq),
        lambda obj: (
            obj is not None and (condition(obj, "Active") or {}).get("reason") == "Terminating"
        ),
        timeout=60,
        what="the ClusterQueue's status saying it is terminating",
    )
    assert terminating is not None
    assert (condition(terminating, "Active") or {}).get("status") == "False"
    assert held["metadata"]["deletionTimestamp"]
    late = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: condition(got.get("late", {}), "QuotaReserved") is not None,
        timeout=60,
        what="the late Job's Workload decided",
    )
    late_reserved = condition(late["late"], "QuotaReserved") or {}
    assert late_reserved.get("status") == "False", "a terminating ClusterQueue admits nothing new"
    await stays(cluster, "clusterqueue", cq)

    ended = kubectl(cluster, "delete", "job", "running", "-n", namespace, "--cascade=background")
    assert ended.returncode == 0, ended.stderr
    ended_at = time.monotonic()
    await eventually(
        lambda: asyncio.to_thread(get, cluster, "clusterqueue", cq),
        lambda obj: obj is None,
        timeout=90,
        what="the ClusterQueue gone once its Workload ended",
    )
    print(f"\n[measured] ClusterQueue {cq} gone {time.monotonic() - ended_at:.1f}s after its Job")
    kubectl(cluster, "delete", "resourceflavor", flavor_name, "--wait=false")


async def test_a_flavor_stays_while_a_cluster_queue_names_it(
    kuota_scheduler: SchedulerReplica, cluster: ClusterHandle, api: client.ApiClient, namespace: str
) -> None:
    cq, flavor_name = f"named-{namespace}", f"ondemand-{namespace}"
    await create_queues(api, namespace, cq=cq, flavor_name=flavor_name)
    done = kubectl(cluster, "delete", "resourceflavor", flavor_name, "--wait=false")
    assert done.returncode == 0, done.stderr

    await stays(cluster, "resourceflavor", flavor_name)
    timed_delete(cluster, "clusterqueue", cq)
    started = time.monotonic()
    await eventually(
        lambda: asyncio.to_thread(get, cluster, "resourceflavor", flavor_name),
        lambda obj: obj is None,
        timeout=DELETE_BOUND_SECONDS,
        what="the ResourceFlavor gone once no ClusterQueue names it",
        interval=0.1,
    )
    print(f"\n[measured] ResourceFlavor {flavor_name} went {time.monotonic() - started:.2f}s later")
