"""The real JobSet controller on the local cluster, on its own (no kuota involved).

What a user of JobSet checks after installing it: a JobSet of two replicated
jobs gets its child Jobs, their Pods run on the (kwok) nodes with the priority
of their PriorityClass, and the JobSet ends ``Completed``; the JobSet of seed
003 is valid JobSet for the API server with the CRD and JobSet's webhooks;
an invalid one is refused by JobSet's own validating webhook; and
``python -m e2e.cluster up --jobset`` leaves the controller running for
``down`` to stop.  No JobSet here carries a queue that kuota would act on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client

from e2e.cluster.controlplane import read_state, recorded_processes
from e2e.cluster.jobset import JobSetController
from e2e.cluster.processes import ProcessRecord, is_alive
from e2e.cluster.tools import ToolPaths
from tests.api.seed_examples import documents

from .fixtures import ClusterHandle
from .waiting import eventually

pytestmark = pytest.mark.cluster

GROUP, VERSION, PLURAL = "jobset.x-k8s.io", "v1alpha2", "jobsets"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
PRIORITY = 1000
ROOT = Path(__file__).resolve().parents[1]


def replicated_job(
    name: str, *, replicas: int, pods: int, priority_class: str | None = None
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "command": ["true"],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }
        ]
    }
    if priority_class:
        pod_spec["priorityClassName"] = priority_class
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "spec": {
                "parallelism": pods,
                "completions": pods,
                "backoffLimit": 0,
                "template": {"spec": pod_spec},
            }
        },
    }


def condition(obj: dict[str, Any], kind: str) -> str | None:
    for entry in (obj.get("status") or {}).get("conditions") or []:
        if entry["type"] == kind:
            return str(entry["status"])
    return None


def kubectl(cluster: ClusterHandle, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    return subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
async def priority_class(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """A PriorityClass of this test alone (they are cluster-wide)."""
    scheduling = client.SchedulingV1Api(api)
    name = f"{namespace}-priority"
    await scheduling.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name=name), value=PRIORITY)
    )
    yield name
    await scheduling.delete_priority_class(name)


async def test_a_jobset_of_two_replicated_jobs_runs_to_completion(
    jobset: JobSetController, api: client.ApiClient, namespace: str, priority_class: str
) -> None:
    custom = client.CustomObjectsApi(api)
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "JobSet",
        "metadata": {"name": "train"},
        "spec": {
            "replicatedJobs": [
                replicated_job("driver", replicas=1, pods=1, priority_class=priority_class),
                replicated_job("workers", replicas=2, pods=2, priority_class=priority_class),
            ]
        },
    }
    await custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    async def read() -> dict[str, Any]:
        found: dict[str, Any] = await custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, "train"
        )
        return found

    finished = await eventually(
        read,
        lambda js: condition(js, "Completed") == "True" or condition(js, "Failed") == "True",
        timeout=180,
        what="the JobSet to finish",
    )
    assert condition(finished, "Completed") == "True", finished["status"]
    assert condition(finished, "Failed") != "True"
    succeeded = {s["name"]: s["succeeded"] for s in finished["status"]["replicatedJobsStatus"]}
    assert succeeded == {"driver": 1, "workers": 2}

    selector = f"{JOBSET_NAME_LABEL}=train"
    jobs = await client.BatchV1Api(api).list_namespaced_job(namespace, label_selector=selector)
    assert sorted(job.metadata.name for job in jobs.items) == [
        "train-driver-0",
        "train-workers-0",
        "train-workers-1",
    ]
    for job in jobs.items:
        assert job.status.succeeded == job.spec.completions, job.metadata.name
        assert any(c.type == "Complete" and c.status == "True" for c in job.status.conditions)

    pods = await client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector=selector)
    assert len(pods.items) == 1 + 2 * 2
    for pod in pods.items:
        assert pod.status.phase == "Succeeded", pod.metadata.name
        assert pod.spec.node_name.startswith("kwok-"), pod.metadata.name
        assert pod.spec.priority_class_name == priority_class
        assert pod.spec.priority == PRIORITY, "the PriorityClass reaches JobSet's pods"


def test_the_seed_jobset_is_valid_jobset(
    jobset: JobSetController, cluster: ClusterHandle, namespace: str
) -> None:
    (seed,) = [doc for doc in documents() if doc.kind == "JobSet" and doc.source.startswith("003")]
    # The seed names no object (generateName), which `kubectl apply` cannot
    # handle; `create` is how Kueue's documentation submits it.
    done = kubectl(
        cluster,
        "create",
        "--dry-run=server",
        "-n",
        namespace,
        "-o",
        "json",
        "-f",
        "-",
        stdin=yaml.safe_dump(seed.raw),
    )
    assert done.returncode == 0, done.stderr
    accepted = json.loads(done.stdout)
    assert accepted["metadata"]["name"].startswith("sleep-job-")
    assert accepted["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"
    pod_spec = accepted["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod_spec["priorityClassName"] == "high-priority"
    # JobSet's mutating webhook ran: these defaults come from nowhere else.
    assert accepted["spec"]["successPolicy"]["operator"] == "All"
    assert accepted["spec"]["replicatedJobs"][0]["template"]["spec"]["completionMode"] == "Indexed"


async def test_an_invalid_jobset_is_refused_by_jobsets_validating_webhook(
    jobset: JobSetController, api: client.ApiClient, namespace: str
) -> None:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "JobSet",
        "metadata": {"name": "bad"},
        "spec": {
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["no-such-job"]},
            "replicatedJobs": [replicated_job("workers", replicas=1, pods=1)],
        },
    }
    with pytest.raises(client.ApiException) as refused:
        await client.CustomObjectsApi(api).create_namespaced_custom_object(
            GROUP, VERSION, namespace, PLURAL, body, dry_run="All"
        )
    assert refused.value.status == 422
    message = json.loads(refused.value.body or "{}").get("message", "")
    assert message.startswith('admission webhook "vjobset.kb.io" denied the request'), message
    assert "no-such-job" in message


def test_up_with_jobset_runs_the_controller_until_down(tmp_path: Path) -> None:
    def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "KUOTA_CLUSTER_DIR": str(tmp_path)}
        env.pop("KUBECONFIG", None)
        return subprocess.run(
            [sys.executable, "-m", "e2e.cluster", "--name", "jobset-cli", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    records: dict[str, ProcessRecord] = {}
    up = run_cli("up", "--jobset")
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        state = read_state(tmp_path / "jobset-cli")
        assert state is not None
        records = {record.name: record for record in recorded_processes(state)}
        assert is_alive(records["jobset-controller"]), "up leaves the controller running"
        crd = subprocess.run(
            [
                str(ToolPaths.resolve(build_if_missing=False).binary("kubectl")),
                "--kubeconfig",
                state["kubeconfig"],
                "get",
                "crd/jobsets.jobset.x-k8s.io",
                "mutatingwebhookconfiguration/jobset-mutating-webhook-configuration",
                "validatingwebhookconfiguration/jobset-validating-webhook-configuration",
                "-o",
                "name",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert crd.returncode == 0, crd.stderr
    finally:
        down = run_cli("down")
    assert down.returncode == 0, down.stderr
    assert "jobset-controller" in down.stdout
    assert not any(is_alive(record) for record in records.values())
