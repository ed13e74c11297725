"""Partial admission on the local cluster (issue 15 item 4), with Kueue's own manifests.

A user follows Kueue's "Run A Kubernetes Job" page: ``kubectl apply`` of
``single-clusterqueue-setup.yaml`` (one ClusterQueue of 9 CPUs, LocalQueue
``user-queue`` in ``default``) and ``kubectl create`` of
``sample-job-partial-admission.yaml`` (20 one-CPU pods, annotation
``kueue.x-k8s.io/job-min-parallelism: "5"``), both copied unchanged into
``e2e/data``.  Kueue admits 9 pods; so does kuota: the Workload's admission
records 9 pods and 9 CPUs, the Job runs with ``parallelism: 9`` (completions
stay 20) on the kwok nodes, never more than 9 pods at once, and completes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from e2e.cluster.tools import ToolPaths

from .fixtures import ClusterHandle
from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
DATA = Path(__file__).parent / "data"
SETUP = DATA / "single-clusterqueue-setup.yaml"
SAMPLE = DATA / "sample-job-partial-admission.yaml"
JOB = "sample-job-partial-admission"


def kubectl(cluster: ClusterHandle, *args: str) -> str:
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    done = subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture
def queues(cluster: ClusterHandle, kuota_scheduler: SchedulerReplica) -> Iterator[None]:
    """Kueue's single ClusterQueue setup, applied as the docs say; removed afterwards."""
    kubectl(cluster, "apply", "-f", str(SETUP))
    yield
    kubectl(cluster, "delete", "-n", "default", "job", JOB, "--ignore-not-found", "--wait=true")
    kubectl(cluster, "delete", "-f", str(SETUP), "--ignore-not-found", "--wait=true")


async def workload_of(api: client.ApiClient) -> dict[str, Any] | None:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, "default", "workloads"
    )
    for item in listed["items"]:
        owners = item["metadata"].get("ownerReferences") or []
        if owners and owners[0]["name"] == JOB:
            return dict(item)
    return None


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return found[0] if found else {}


async def test_the_sample_job_is_admitted_with_the_nine_pods_that_fit_and_completes(
    cluster: ClusterHandle, queues: None, api: client.ApiClient
) -> None:
    kubectl(cluster, "create", "-f", str(SAMPLE))
    batch = client.BatchV1Api(api)

    workload = await eventually(
        lambda: workload_of(api),
        lambda wl: wl is not None and condition(wl, "QuotaReserved").get("status") == "True",
        timeout=90,
        what="the sample Job's Workload to reserve quota",
    )
    assert workload is not None
    (pod_set,) = workload["spec"]["podSets"]
    assert (pod_set["count"], pod_set["minCount"]) == (20, 5), "the Workload keeps the request"
    (assignment,) = workload["status"]["admission"]["podSetAssignments"]
    assert assignment["count"] == 9
    assert assignment["flavors"] == {"cpu": "default-flavor", "memory": "default-flavor"}
    assert assignment["resourceUsage"]["cpu"] == "9"

    most_active = 0

    async def job_state() -> client.V1Job:
        nonlocal most_active
        job = await batch.read_namespaced_job(JOB, "default")
        most_active = max(most_active, job.status.active or 0)
        return job

    started = await eventually(
        job_state,
        lambda job: job.spec.suspend is False,
        timeout=60,
        what="the sample Job started",
    )
    assert (started.spec.parallelism, started.spec.completions) == (9, 20)

    done = await eventually(
        job_state,
        lambda job: any(
            c.type == "Complete" and c.status == "True" for c in job.status.conditions or []
        ),
        timeout=180,
        what="the sample Job complete",
    )
    assert done.status.succeeded == 20
    assert most_active <= 9, f"{most_active} pods ran at once, 9 were admitted"
    pods = await client.CoreV1Api(api).list_namespaced_pod(
        "default", label_selector=f"batch.kubernetes.io/job-name={JOB}"
    )
    nodes = {pod.spec.node_name for pod in pods.items}
    assert nodes and all(str(node).startswith("kwok-") for node in nodes), nodes

    finished = await eventually(
        lambda: workload_of(api),
        lambda wl: wl is not None and condition(wl, "Finished").get("status") == "True",
        timeout=60,
        what="the sample Job's Workload finished",
    )
    assert finished is not None
