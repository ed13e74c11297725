"""MPIJobs queued by kuota on the local cluster, with the real MPI operator.

The MPI operator (v0.8.2, built from its Go module) runs an MPIJob's
launcher as a batch Job and its workers as pods.  kuota suspends a queued
MPIJob at creation (``runPolicy.suspend``), admits it as one Workload
(pod sets ``launcher`` and ``worker``), unsuspends it with both templates
steered to the flavor, and the operator's pods run on the flavor's kwok
nodes; the launcher Job it makes is left to the MPIJob.  A higher-priority
MPIJob preempts it: kuota suspends it and puts its templates back, the
operator deletes its pods; when the higher one has finished (its launcher
completes), its quota is given back and the preempted one runs again.
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

GROUP, VERSION, PLURAL = "kubeflow.org", "v2beta1", "mpijobs"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"


@pytest.fixture
def mpi_operator(framework_controllers: FrameworkControllers) -> FrameworkController:
    return framework_controllers.start("mpi-operator")


@pytest.fixture
async def queues(api: client.ApiClient, namespace: str) -> AsyncIterator[Queues]:
    """750m CPU: one MPIJob of a launcher and two workers of 250m each."""
    created = await create_queues(api, namespace, cpu="750m")
    yield created
    await delete_queues(api, created)


def replica(role: str, replicas: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "replicas": replicas,
        "template": {
            "metadata": {"annotations": annotations or {}},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {
                        "name": role,
                        "image": "mpioperator/mpi-pi:openmpi",
                        "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                    }
                ],
            },
        },
    }


def mpijob(name: str, *, priority: str, launcher_runs: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "MPIJob",
        "metadata": {
            "name": name,
            "labels": {
                "kueue.x-k8s.io/queue-name": "user-queue",
                "kueue.x-k8s.io/priority-class": priority,
            },
        },
        "spec": {
            "slotsPerWorker": 1,
            "runPolicy": {"cleanPodPolicy": "Running"},
            "mpiReplicaSpecs": {
                "Launcher": replica("launcher", 1, launcher_runs),
                "Worker": replica("worker", 2),
            },
        },
    }


class MpiJobs:
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.api, self.namespace = api, namespace
        self.custom = client.CustomObjectsApi(api)

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = await self.custom.create_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, body
        )
        return created

    async def read(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.custom.get_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, name
        )
        return found

    async def delete(self, name: str) -> None:
        await self.custom.delete_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, name
        )

    async def running(self, name: str) -> list[client.V1Pod]:
        found = await pods(self.api, self.namespace, f"{JOB_NAME_LABEL}={name}")
        return [p for p in found if not p.metadata.deletion_timestamp]


def launcher_and_workers_on_the_flavor(found: list[client.V1Pod]) -> bool:
    return len(found) == 3 and all(running_on_flavor(pod) for pod in found)


def owned_by(name: str) -> Any:
    def check(found: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        return next(
            (wl for wl in found.values() if wl["metadata"]["ownerReferences"][0]["name"] == name),
            None,
        )

    return check


async def test_an_mpijob_runs_on_the_flavor_is_preempted_restored_and_runs_again(
    mpi_operator: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    jobs = MpiJobs(api, namespace)
    created = await jobs.create(mpijob("low", priority=queues.low, launcher_runs=RUN_FOR_AN_HOUR))
    assert created["spec"]["runPolicy"]["suspend"] is True, "kuota's webhook suspends it"
    await eventually(
        lambda: jobs.running("low"),
        launcher_and_workers_on_the_flavor,
        timeout=180,
        what="the MPI operator's launcher and workers running on the flavor's nodes",
    )
    found = await workloads(api, namespace)
    assert list(found.values())[0]["metadata"]["ownerReferences"][0]["kind"] == "MPIJob"
    assert len(found) == 1, "the launcher Job the operator made is left to the MPIJob"
    low = owned_by("low")(found)
    assert [(p["name"], p["count"]) for p in low["spec"]["podSets"]] == [
        ("launcher", 1),
        ("worker", 2),
    ]
    assert low["spec"]["priority"] == 100
    explained = await kuota(cluster, "explain", "mpijob/low", "-n", namespace)
    assert explained.returncode == 0, explained.stderr
    assert "admitted" in explained.stdout, explained.stdout

    await jobs.create(mpijob("high", priority=queues.high, launcher_runs={}))
    await eventually(
        lambda: jobs.read("low"),
        lambda job: (
            job["spec"]["runPolicy"].get("suspend") is True
            and "nodeSelector" not in job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
        ),
        timeout=120,
        what="the low-priority MPIJob suspended by the preemption, kuota's placement taken off",
    )
    evicted = owned_by("low")(await workloads(api, namespace))
    assert is_true(evicted, "Evicted") and is_true(evicted, "Preempted"), evicted["status"]

    finished = await eventually(
        lambda: workloads(api, namespace),
        lambda got: is_true(owned_by("high")(got) or {}, "Finished"),
        timeout=240,
        what="the high-priority MPIJob run and finished (its launcher completes at once)",
    )
    assert is_true(await jobs.read("high"), "Succeeded")
    assert (owned_by("high")(finished)["status"]["conditions"][-1]).get("reason") == "Succeeded"
    await eventually(
        lambda: jobs.running("low"),
        launcher_and_workers_on_the_flavor,
        timeout=240,
        what="the preempted MPIJob admitted again and running on the flavor's nodes",
    )
    await jobs.delete("low")
    await jobs.delete("high")
    await quota_given_back(api, queues, timeout=120, what="the quota given back")
