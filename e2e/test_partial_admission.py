"""Partial admission on the local cluster, with Kueue's own manifests.

A user follows Kueue's "Run A Kubernetes Job" page: ``kubectl apply`` of
``single-clusterqueue-setup.yaml`` (one ClusterQueue of 9 CPUs, LocalQueue
``user-queue`` in ``default``) and ``kubectl create`` of
``sample-job-partial-admission.yaml`` (20 one-CPU pods, annotation
``kueue.x-k8s.io/job-min-parallelism: "5"``), both copied unchanged into
``e2e/data``.  Kueue admits 9 pods; so does kuota: the Workload's admission
records 9 pods and 9 CPUs, the Job runs with ``parallelism: 9`` (completions
stay 20) on the kwok nodes, never more than 9 pods at once, and completes.

Stopping such a Job (its Workload deactivated) suspends it and puts
``parallelism: 20`` back, so it queues again at its full size; reactivated,
it is admitted with 9 again.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
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
EVICTED = "partial-then-deactivated"


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
    kubectl(
        cluster, "delete", "-n", "default", "job", JOB, EVICTED, "--ignore-not-found", "--wait=true"
    )
    kubectl(cluster, "delete", "-f", str(SETUP), "--ignore-not-found", "--wait=true")


async def workload_of(api: client.ApiClient, job: str = JOB) -> dict[str, Any] | None:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, "default", "workloads"
    )
    for item in listed["items"]:
        owners = item["metadata"].get("ownerReferences") or []
        if owners and owners[0]["name"] == job:
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


def long_job(name: str) -> dict[str, Any]:
    """The sample's shape (20 one-CPU pods, at least 5) with pods kwok keeps running."""
    sample = yaml.safe_load(SAMPLE.read_text())
    sample["metadata"]["name"] = name
    sample["spec"]["template"]["metadata"] = {
        "annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "600s"}
    }
    return dict(sample)


def set_active(cluster: ClusterHandle, workload: dict[str, Any], active: bool) -> None:
    """``spec.active`` of the Workload, as a user stops and resumes a job in Kueue."""
    name = workload["metadata"]["name"]
    patch = json.dumps({"spec": {"active": active}})
    kubectl(cluster, "-n", "default", "patch", f"workloads.{VERSION}.{GROUP}", name,
            "--type=merge", "-p", patch)  # fmt: skip


async def test_a_stopped_partially_admitted_job_gets_its_full_parallelism_back(
    cluster: ClusterHandle, queues: None, api: client.ApiClient
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job("default", long_job(EVICTED))

    def reserved(wl: dict[str, Any] | None) -> bool:
        return wl is not None and condition(wl, "QuotaReserved").get("status") == "True"

    workload = await eventually(
        lambda: workload_of(api, EVICTED), reserved, timeout=90, what="the Job admitted"
    )
    assert workload is not None
    assert workload["status"]["admission"]["podSetAssignments"][0]["count"] == 9
    running = await eventually(
        lambda: batch.read_namespaced_job(EVICTED, "default"),
        lambda job: job.spec.suspend is False and (job.status.active or 0) == 9,
        timeout=90,
        what="9 pods of the Job running",
    )
    assert running.spec.parallelism == 9

    set_active(cluster, workload, False)
    stopped = await eventually(
        lambda: batch.read_namespaced_job(EVICTED, "default"),
        lambda job: job.spec.suspend is True and job.spec.parallelism == 20,
        timeout=90,
        what="the Job suspended with its parallelism restored",
    )
    assert stopped.spec.completions == 20
    released = await eventually(
        lambda: workload_of(api, EVICTED),
        lambda wl: wl is not None and not (wl.get("status") or {}).get("admission"),
        timeout=90,
        what="the Workload's quota released",
    )
    assert released is not None
    assert released["spec"]["podSets"][0]["count"] == 20, "the same Workload, not rebuilt smaller"

    set_active(cluster, released, True)
    again = await eventually(
        lambda: workload_of(api, EVICTED), reserved, timeout=90, what="the Job admitted again"
    )
    assert again is not None
    assert again["status"]["admission"]["podSetAssignments"][0]["count"] == 9
    restarted = await eventually(
        lambda: batch.read_namespaced_job(EVICTED, "default"),
        lambda job: job.spec.suspend is False,
        timeout=60,
        what="the Job started again",
    )
    assert (restarted.spec.parallelism, restarted.spec.completions) == (9, 20)
