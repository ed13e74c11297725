"""PyTorchJobs and JAXJobs queued by kuota on the local cluster, with Kubeflow's training operator.

The training operator (Trainer v1, ``training-operator`` v1.9.3, built from
its Go module) makes a job's pods directly from its replica specs.  kuota
suspends a queued job at creation (``runPolicy.suspend``), admits it as one
Workload (a pod set per replica type: ``master`` and ``worker``), starts it
with every template steered to the flavor, and the operator's pods run on
the flavor's kwok nodes.  A higher-priority JAXJob preempts a running
PyTorchJob, which is suspended (the operator deletes its pods) and restored;
the JAXJob's pods complete (kwok), it succeeds, its Workload finishes and
its quota goes back, and the PyTorchJob runs again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from e2e.cluster.frameworks import FrameworkController

from ..conftest import FrameworkControllers
from ..fixtures import ClusterHandle
from ..kuota_scheduler import SchedulerReplica
from ..test_user_commands import kuota
from ..waiting import eventually
from .queues import (
    RUN_FOR_AN_HOUR,
    Queues,
    create_queues,
    delete_queues,
    is_true,
    pods,
    quota_given_back,
    running_on_flavor,
    workloads,
)

pytestmark = pytest.mark.cluster

GROUP, VERSION = "kubeflow.org", "v1"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"


@pytest.fixture
def training_operator(framework_controllers: FrameworkControllers) -> FrameworkController:
    return framework_controllers.start("training-operator")


@pytest.fixture
async def queues(api: client.ApiClient, namespace: str) -> AsyncIterator[Queues]:
    """750m CPU: three pods of 250m at a time."""
    created = await create_queues(api, namespace, cpu="750m")
    yield created
    await delete_queues(api, created)


def replica(container: str, replicas: int, annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "replicas": replicas,
        "restartPolicy": "Never",
        "template": {
            "metadata": {"annotations": annotations},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": container,
                        "image": "docker.io/kubeflow/pytorch-dist-mnist:latest",
                        "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    }
                ],
            },
        },
    }


def queued(kind: str, name: str, priority: str, specs: dict[str, Any]) -> dict[str, Any]:
    field = {"PyTorchJob": "pytorchReplicaSpecs", "JAXJob": "jaxReplicaSpecs"}[kind]
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": kind,
        "metadata": {
            "name": name,
            "labels": {
                "kueue.x-k8s.io/queue-name": "user-queue",
                "kueue.x-k8s.io/priority-class": priority,
            },
        },
        "spec": {field: specs},
    }


class TrainingJobs:
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.api, self.namespace = api, namespace
        self.custom = client.CustomObjectsApi(api)

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        plural = body["kind"].lower() + "s"
        created: dict[str, Any] = await self.custom.create_namespaced_custom_object(
            GROUP, VERSION, self.namespace, plural, body
        )
        return created

    async def read(self, plural: str, name: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.custom.get_namespaced_custom_object(
            GROUP, VERSION, self.namespace, plural, name
        )
        return found

    async def delete(self, plural: str, name: str) -> None:
        await self.custom.delete_namespaced_custom_object(
            GROUP, VERSION, self.namespace, plural, name
        )

    async def live_pods(self, name: str) -> list[client.V1Pod]:
        found = await pods(self.api, self.namespace, f"{JOB_NAME_LABEL}={name}")
        return [p for p in found if not p.metadata.deletion_timestamp]


def owned_by(kind: str, name: str) -> Any:
    def check(found: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        for workload in found.values():
            owner = workload["metadata"]["ownerReferences"][0]
            if (owner["kind"], owner["name"]) == (kind, name):
                return workload
        return None

    return check


def three_on_the_flavor(found: list[client.V1Pod]) -> bool:
    return len(found) == 3 and all(running_on_flavor(pod) for pod in found)


async def test_a_pytorchjob_is_preempted_by_a_jaxjob_restored_and_runs_again(
    training_operator: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    jobs = TrainingJobs(api, namespace)
    torch = queued(
        "PyTorchJob",
        "torch",
        queues.low,
        {
            "Master": replica("pytorch", 1, RUN_FOR_AN_HOUR),
            "Worker": replica("pytorch", 2, RUN_FOR_AN_HOUR),
        },
    )
    created = await jobs.create(torch)
    assert created["spec"]["runPolicy"]["suspend"] is True, "kuota's webhook suspends it"
    await eventually(
        lambda: jobs.live_pods("torch"),
        three_on_the_flavor,
        timeout=180,
        what="the operator's master and workers running on the flavor's nodes",
    )
    workload = owned_by("PyTorchJob", "torch")(await workloads(api, namespace))
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [
        ("master", 1),
        ("worker", 2),
    ]
    explained = await kuota(cluster, "explain", "pytorchjob/torch", "-n", namespace)
    assert explained.returncode == 0 and "admitted" in explained.stdout, explained.stdout

    jax = queued("JAXJob", "jax", queues.high, {"Worker": replica("jax", 3, {})})
    await jobs.create(jax)
    await eventually(
        lambda: jobs.read("pytorchjobs", "torch"),
        lambda job: (
            job["spec"]["runPolicy"].get("suspend") is True
            and "nodeSelector"
            not in job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
        ),
        timeout=120,
        what="the PyTorchJob suspended by the preemption, kuota's placement taken off",
    )
    evicted = owned_by("PyTorchJob", "torch")(await workloads(api, namespace))
    assert is_true(evicted, "Evicted") and is_true(evicted, "Preempted"), evicted["status"]

    await eventually(
        lambda: workloads(api, namespace),
        lambda got: is_true(owned_by("JAXJob", "jax")(got) or {}, "Finished"),
        timeout=240,
        what="the JAXJob run to completion and its Workload finished",
    )
    assert is_true(await jobs.read("jaxjobs", "jax"), "Succeeded")
    await eventually(
        lambda: jobs.live_pods("torch"),
        three_on_the_flavor,
        timeout=240,
        what="the PyTorchJob admitted again and running on the flavor's nodes",
    )
    await jobs.delete("pytorchjobs", "torch")
    await jobs.delete("jaxjobs", "jax")
    await quota_given_back(api, queues, timeout=120, what="the quota given back")
