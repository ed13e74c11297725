"""RayClusters and RayJobs queued by kuota on the local cluster, with the real KubeRay operator.

KubeRay (``ray-operator`` v1.6.2, built from its Go module) makes the pods of
a cluster from its head and worker groups, and a RayJob's cluster and
submitter Job; kuota suspends a queued one at creation, admits it as one
Workload (the head, each worker group, a RayJob's submitter), unsuspends it
with each group's template steered to the flavor, and KubeRay's pods run on
the flavor's kwok nodes.  A cluster that does not fit waits suspended, with
no pods, and runs once the first is deleted; deleting a queued object gives
its quota back.  A higher-priority RayJob preempts a lower one: kuota
suspends it and puts its templates back, KubeRay deletes its cluster, and
it runs again once the higher one has finished.  A RayJob "finishes" here
through its ``activeDeadlineSeconds``: Ray's dashboard, through which
KubeRay reads a job's own status, cannot be reached on this machine (no
cluster DNS, no pod network), so the deadline is the one end KubeRay
reports without it.  ``kuota explain raycluster/NAME`` explains a waiting
cluster.
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
    Queues,
    condition,
    create_queues,
    delete_queues,
    is_true,
    pods,
    quota_given_back,
    running_on_flavor,
    waiting_for_quota,
    workloads,
)

pytestmark = pytest.mark.cluster

GROUP, VERSION = "ray.io", "v1"
CLUSTER_LABEL = "ray.io/cluster"


@pytest.fixture
def kuberay(framework_controllers: FrameworkControllers) -> FrameworkController:
    return framework_controllers.start("kuberay")


@pytest.fixture
async def queues(api: client.ApiClient, namespace: str) -> AsyncIterator[Queues]:
    """1 CPU: one cluster of three 250m pods, or one RayJob (with its 500m submitter), fits."""
    created = await create_queues(api, namespace, cpu="1")
    yield created
    await delete_queues(api, created)


def group_template(cpu: str = "250m") -> dict[str, Any]:
    return {
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [
                {
                    "name": "ray",
                    "image": "rayproject/ray:2.52.0",
                    "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                }
            ],
        }
    }


def cluster_spec(workers: int) -> dict[str, Any]:
    return {
        "headGroupSpec": {"rayStartParams": {}, "template": group_template()},
        "workerGroupSpecs": [
            {
                "groupName": "workers",
                "replicas": workers,
                "minReplicas": workers,
                "maxReplicas": workers,
                "rayStartParams": {},
                "template": group_template(),
            }
        ],
    }


def queued(kind: str, name: str, spec: dict[str, Any], priority: str | None) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": "user-queue"}
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": kind,
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    }


def ray_job(name: str, *, priority: str, deadline: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "entrypoint": "python -c 'import ray; ray.init()'",
        "shutdownAfterJobFinishes": True,
        "rayClusterSpec": cluster_spec(workers=1),
    }
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    return queued("RayJob", name, spec, priority)


class Ray:
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

    async def scale(self, cluster: str, workers: int) -> None:
        """What KubeRay's autoscaler writes: the first worker group's replicas."""
        await self.custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            self.namespace,
            "rayclusters",
            cluster,
            [{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": workers}],
        )

    async def cluster_pods(self, cluster: str) -> list[client.V1Pod]:
        return await pods(self.api, self.namespace, f"{CLUSTER_LABEL}={cluster}")

    async def job_cluster(self, job: str) -> str:
        return str((await self.read("rayjobs", job)).get("status", {}).get("rayClusterName", ""))


def owned_by(kind: str, name: str) -> Any:
    def check(found: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        for workload in found.values():
            owner = workload["metadata"]["ownerReferences"][0]
            if (owner["kind"], owner["name"]) == (kind, name):
                return workload
        return None

    return check


def active_slice(got: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The one unfinished Workload (slice) among ``got``, None while there are more."""
    unfinished = [w for w in got.values() if not is_true(w, "Finished")]
    return unfinished[0] if len(unfinished) == 1 else None


def replaced_by_an_admitted_slice(first: dict[str, Any]) -> Any:
    return lambda got: (
        (wl := active_slice(got)) is not None
        and wl["metadata"]["name"] != first["metadata"]["name"]
        and is_true(wl, "Admitted")
    )


def all_running(expected: int) -> Any:
    return lambda found: len(found) == expected and all(running_on_flavor(p) for p in found)


async def test_a_raycluster_waits_for_quota_runs_on_the_flavor_and_gives_it_back(
    kuberay: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    ray = Ray(api, namespace)
    first = await ray.create(queued("RayCluster", "first", cluster_spec(workers=2), None))
    assert first["spec"]["suspend"] is True, "kuota's webhook suspends a queued RayCluster"
    found = await eventually(
        lambda: workloads(api, namespace),
        lambda got: (
            (wl := owned_by("RayCluster", "first")(got)) is not None
            and is_true(wl, "QuotaReserved")
        ),
        timeout=120,
        what="the first RayCluster's Workload admitted",
    )
    workload = owned_by("RayCluster", "first")(found)
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [
        ("head", 1),
        ("workers", 2),
    ]
    await eventually(
        lambda: ray.cluster_pods("first"),
        all_running(3),
        timeout=120,
        what="KubeRay's head and workers running on the flavor's nodes",
    )

    second = await ray.create(queued("RayCluster", "second", cluster_spec(workers=2), None))
    waiting = await eventually(
        lambda: workloads(api, namespace),
        lambda got: (
            (wl := owned_by("RayCluster", "second")(got)) is not None and waiting_for_quota(wl)
        ),
        timeout=120,
        what="the second RayCluster waiting for quota",
    )
    assert owned_by("RayCluster", "second")(waiting) is not None
    assert (await ray.read("rayclusters", "second"))["spec"]["suspend"] is True
    assert await ray.cluster_pods("second") == [], "a waiting cluster has no pods"
    explained = await kuota(cluster, "explain", "raycluster/second", "-n", namespace)
    assert explained.returncode == 0, explained.stderr
    assert "It is pending in LocalQueue user-queue" in explained.stdout, explained.stdout
    assert "insufficient unused quota for cpu" in explained.stdout

    await ray.delete("rayclusters", "first")
    await eventually(
        lambda: ray.cluster_pods("second"),
        all_running(3),
        timeout=180,
        what="the second RayCluster admitted once the first is gone, and running",
    )
    assert second["metadata"]["uid"]
    await ray.delete("rayclusters", "second")
    await quota_given_back(api, queues, timeout=120, what="the quota given back once both are gone")


def elastic_cluster(name: str, workers: int) -> dict[str, Any]:
    """An elastic RayCluster with in-tree autoscaling, its autoscaler sidecar asking 100m."""
    spec = cluster_spec(workers)
    spec["workerGroupSpecs"][0].update(minReplicas=0, maxReplicas=3)
    spec["enableInTreeAutoscaling"] = True
    spec["autoscalerOptions"] = {
        "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"cpu": "100m", "memory": "64Mi"},
        }
    }
    body = queued("RayCluster", name, spec, None)
    body["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    return body


def elastic_gated(pod: client.V1Pod) -> bool:
    return any(g.name == "kueue.x-k8s.io/elastic-job" for g in pod.spec.scheduling_gates or [])


async def test_an_elastic_raycluster_autoscales_within_its_quota_by_workload_slices(
    kuberay: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    """The replicas KubeRay's autoscaler writes, written here as it would: 1 CPU holds the head
    (250m), its autoscaler (100m) and two workers (250m each), not three."""
    ray = Ray(api, namespace)
    await ray.create(elastic_cluster("elastic", workers=1))
    found = await eventually(
        lambda: workloads(api, namespace),
        lambda got: (
            (wl := owned_by("RayCluster", "elastic")(got)) is not None and is_true(wl, "Admitted")
        ),
        timeout=120,
        what="the elastic RayCluster's first slice admitted",
    )
    first = owned_by("RayCluster", "elastic")(found)
    head = first["spec"]["podSets"][0]["template"]["spec"]["containers"]
    assert [c["name"] for c in head] == ["ray", "autoscaler"], "the sidecar is counted"
    running = await eventually(
        lambda: ray.cluster_pods("elastic"),
        all_running(2),
        timeout=120,
        what="the head and one worker running",
    )
    head_pod = next(p for p in running if p.metadata.labels.get("ray.io/node-type") == "head")
    injected = {c.name: c.resources.requests for c in head_pod.spec.containers}
    assert injected.get("autoscaler") == {"cpu": "100m", "memory": "64Mi"}, injected

    await ray.scale("elastic", 2)
    found = await eventually(
        lambda: workloads(api, namespace),
        replaced_by_an_admitted_slice(first),
        timeout=120,
        what="a new slice for two workers admitted in the first one's place",
    )
    second = active_slice(found)
    assert second is not None
    assert [p["count"] for p in second["spec"]["podSets"]] == [1, 2]
    await eventually(
        lambda: ray.cluster_pods("elastic"),
        all_running(3),
        timeout=120,
        what="the second worker let through once its slice is admitted",
    )

    await ray.scale("elastic", 3)
    found = await eventually(
        lambda: workloads(api, namespace),
        lambda got: any(
            [p["count"] for p in w["spec"]["podSets"]] == [1, 3]
            and "insufficient quota" in (condition(w, "QuotaReserved") or {}).get("message", "")
            for w in got.values()
        ),
        timeout=120,
        what="the slice for three workers waiting: it does not fit",
    )
    assert is_true(found[second["metadata"]["name"]], "Admitted"), "the admitted slice stays"
    listed = await eventually(
        lambda: ray.cluster_pods("elastic"),
        lambda got: len(got) == 4 and sum(1 for p in got if elastic_gated(p)) == 1,
        timeout=120,
        what="KubeRay's third worker created and held behind the elastic gate",
    )
    assert sum(1 for p in listed if running_on_flavor(p)) == 3
    await ray.delete("rayclusters", "elastic")
    await quota_given_back(
        api, queues, timeout=120, what="the quota given back once the cluster is gone"
    )


async def test_a_rayjob_is_preempted_restored_and_runs_again_after_the_other_finishes(
    kuberay: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    ray = Ray(api, namespace)
    await ray.create(ray_job("low", priority=queues.low))
    low_cluster = await eventually(
        lambda: ray.job_cluster("low"),
        bool,
        timeout=120,
        what="KubeRay making the low-priority RayJob's cluster",
    )
    await eventually(
        lambda: ray.cluster_pods(low_cluster),
        all_running(2),
        timeout=120,
        what="the low-priority RayJob's cluster running on the flavor's nodes",
    )
    found = await workloads(api, namespace)
    assert [wl["metadata"]["ownerReferences"][0]["kind"] for wl in found.values()] == ["RayJob"], (
        "the RayCluster KubeRay made (with the RayJob's labels) is left to the RayJob"
    )
    low_workload = owned_by("RayJob", "low")(found)
    assert [(p["name"], p["count"]) for p in low_workload["spec"]["podSets"]] == [
        ("head", 1),
        ("workers", 1),
        ("submitter", 1),
    ]

    await ray.create(ray_job("high", priority=queues.high, deadline=30))
    await eventually(
        lambda: ray.read("rayjobs", "low"),
        lambda job: (
            job["spec"].get("suspend") is True
            and "nodeSelector"
            not in job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
        ),
        timeout=120,
        what="the low-priority RayJob suspended by the preemption, kuota's placement taken off",
    )
    evicted = owned_by("RayJob", "low")(await workloads(api, namespace))
    assert is_true(evicted, "Evicted") and is_true(evicted, "Preempted"), evicted["status"]
    high_cluster = await eventually(
        lambda: ray.job_cluster("high"),
        bool,
        timeout=120,
        what="the high-priority RayJob's cluster",
    )
    await eventually(
        lambda: ray.cluster_pods(high_cluster),
        all_running(2),
        timeout=180,
        what="the high-priority RayJob running on the flavor's nodes",
    )
    assert await ray.cluster_pods(low_cluster) == [], "KubeRay deleted the preempted cluster"

    finished = await eventually(
        lambda: workloads(api, namespace),
        lambda got: is_true(owned_by("RayJob", "high")(got) or {}, "Finished"),
        timeout=180,
        what="the high-priority RayJob's deadline ending it, and its Workload finished",
    )
    assert (owned_by("RayJob", "high")(finished)["status"]["conditions"][-1]["reason"]) in (
        "Failed",
        "Succeeded",
    )
    again = await eventually(
        lambda: ray.read("rayjobs", "low"),
        lambda job: job["spec"].get("suspend") is False,
        timeout=180,
        what="the preempted RayJob admitted and started again",
    )
    again_cluster = await eventually(
        lambda: ray.job_cluster("low"),
        bool,
        timeout=120,
        what="KubeRay making the restarted RayJob's cluster",
    )
    await eventually(
        lambda: ray.cluster_pods(again_cluster),
        all_running(2),
        timeout=180,
        what="the restarted RayJob's cluster running on the flavor's nodes",
    )
    assert again["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["nodeSelector"]
    await ray.delete("rayjobs", "low")
    await ray.delete("rayjobs", "high")


async def test_a_rayservice_is_queued_as_its_cluster_preempted_and_restored(
    kuberay: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    ray = Ray(api, namespace)
    service_spec = {"rayClusterConfig": cluster_spec(workers=2)}
    created = await ray.create(queued("RayService", "serve", service_spec, queues.low))
    assert created["spec"]["rayClusterConfig"]["suspend"] is True, "suspended through its cluster"

    async def service_pods() -> list[client.V1Pod]:
        """The pods of the RayClusters KubeRay made for the RayService (labelled with it)."""
        clusters = await ray.custom.list_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "rayclusters",
            label_selector="ray.io/originated-from-cr-name=serve",
        )
        found = []
        for item in clusters["items"]:
            found += await ray.cluster_pods(item["metadata"]["name"])
        return [p for p in found if not p.metadata.deletion_timestamp]

    await eventually(
        service_pods,
        all_running(3),
        timeout=180,
        what="the RayService's cluster running on the flavor's nodes",
    )
    found = await workloads(api, namespace)
    assert [wl["metadata"]["ownerReferences"][0]["kind"] for wl in found.values()] == [
        "RayService"
    ], "the RayCluster it made is left to it"

    await ray.create(queued("RayCluster", "urgent", cluster_spec(workers=2), queues.high))
    await eventually(
        lambda: ray.read("rayservices", "serve"),
        lambda service: service["spec"]["rayClusterConfig"].get("suspend") is True,
        timeout=120,
        what="the RayService suspended by the preemption",
    )
    evicted = owned_by("RayService", "serve")(await workloads(api, namespace))
    assert is_true(evicted, "Evicted") and is_true(evicted, "Preempted"), evicted["status"]
    await eventually(
        lambda: ray.cluster_pods("urgent"),
        all_running(3),
        timeout=180,
        what="the higher-priority RayCluster running",
    )
    await eventually(service_pods, lambda found: found == [], timeout=120, what="its pods gone")

    await ray.delete("rayclusters", "urgent")
    await eventually(
        service_pods,
        all_running(3),
        timeout=180,
        what="the RayService admitted again and its cluster running",
    )
    await ray.delete("rayservices", "serve")
    await quota_given_back(
        api, queues, timeout=120, what="the quota given back once the RayService is gone"
    )


def elastic_ray_job(name: str) -> dict[str, Any]:
    """An elastic RayJob whose cluster autoscales; its submitter asks 100m (1 CPU then holds
    the head, its autoscaler, the submitter and two workers, not three)."""
    cluster = elastic_cluster(name, workers=1)
    submitter = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "ray-job-submitter",
                    "image": "rayproject/ray:2.52.0",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
        }
    }
    spec = {
        "entrypoint": "python -c 'import ray; ray.init()'",
        "shutdownAfterJobFinishes": True,
        "rayClusterSpec": cluster["spec"],
        "submitterPodTemplate": submitter,
    }
    body = queued("RayJob", name, spec, None)
    body["metadata"]["annotations"] = dict(cluster["metadata"]["annotations"])
    return body


async def test_an_elastic_rayjob_follows_the_cluster_kuberay_scales_for_it(
    kuberay: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    """KubeRay's autoscaler scales the RayCluster KubeRay made for the RayJob, not the RayJob:
    its replicas, written here as the autoscaler would, move the RayJob's Workload."""
    ray = Ray(api, namespace)
    await ray.create(elastic_ray_job("elastic-job"))
    cluster = await eventually(
        lambda: ray.job_cluster("elastic-job"),
        bool,
        timeout=120,
        what="KubeRay making the elastic RayJob's cluster",
    )
    await eventually(
        lambda: ray.cluster_pods(cluster),
        all_running(2),
        timeout=120,
        what="the head and one worker running on the flavor's nodes",
    )
    first = owned_by("RayJob", "elastic-job")(await workloads(api, namespace))
    assert [(p["name"], p["count"]) for p in first["spec"]["podSets"]] == [
        ("head", 1),
        ("workers", 1),
        ("submitter", 1),
    ]

    await ray.scale(cluster, 2)
    found = await eventually(
        lambda: workloads(api, namespace),
        replaced_by_an_admitted_slice(first),
        timeout=120,
        what="a new slice of the RayJob for two workers admitted in the first one's place",
    )
    second = active_slice(found)
    assert second is not None
    assert [p["count"] for p in second["spec"]["podSets"]] == [1, 2, 1]
    await eventually(
        lambda: ray.cluster_pods(cluster),
        lambda got: sum(1 for p in got if running_on_flavor(p) and not elastic_gated(p)) == 3,
        timeout=120,
        what="the second worker let through once its slice is admitted",
    )
    assert (await ray.read("rayjobs", "elastic-job"))["spec"]["rayClusterSpec"]["workerGroupSpecs"][
        0
    ]["replicas"] == 1, "the RayJob itself is never resized"

    await ray.scale(cluster, 1)
    shrunk = await eventually(
        lambda: workloads(api, namespace),
        lambda got: (
            [p["count"] for p in got[second["metadata"]["name"]]["spec"]["podSets"]] == [1, 1, 1]
        ),
        timeout=120,
        what="the admitted slice shrunk in place to one worker",
    )
    assert is_true(shrunk[second["metadata"]["name"]], "Admitted")
    await ray.delete("rayjobs", "elastic-job")
    await quota_given_back(
        api, queues, timeout=120, what="the quota given back once the RayJob is gone"
    )
