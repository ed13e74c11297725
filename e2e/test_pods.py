"""Plain Pods queued by kuota on the local cluster (Kueue's ``pod`` framework).

The Pods are shaped like Kueue's "Run Plain Pods" example (``generateName:
kueue-sleep-``, label ``kueue.x-k8s.io/queue-name: user-queue``, one
container asking for CPU), against a ClusterQueue of 1 CPU whose flavor is
the tainted spot kwok nodes (node label ``instance-type: spot`` and a
toleration).  kuota's webhook gates each queued Pod at creation (scheduling
gate, managed label, finalizer); the first is admitted: its gate comes off,
it gets the flavor's nodeSelector and toleration and runs on a spot node,
while the second waits, gated and unscheduled, because the queue is full.
When the first succeeds its Workload finishes, its finalizer is removed, and
the second runs.  A running Pod preempted by a higher-priority one is
stopped as Kueue stops it: deleted.  Pods outside kuota's business (no
queue name, or in an unmanaged namespace) are never touched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster

KUEUE, V1BETA2 = "kueue.x-k8s.io", "v1beta2"
QUEUE = "kueue.x-k8s.io/queue-name"
GATE = "kueue.x-k8s.io/admission"
TOPOLOGY_GATE = "kueue.x-k8s.io/topology"
GATES = [GATE, TOPOLOGY_GATE]
"""What a queued Pod is created with (docs/concepts.md#topology-aware-scheduling)."""
MANAGED = "kueue.x-k8s.io/managed"
DELAY = "pod-complete.stage.kwok.x-k8s.io/delay"
SPOT_TOLERATION = {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}


def sleep_pod(
    *, queue: str | None = "user-queue", run_for: str = "0s", priority: str | None = None
) -> dict[str, Any]:
    """Kueue's plain-Pod example, with kwok's run time."""
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "sleep",
                "image": "busybox",
                "command": ["sleep"],
                "args": ["3s"],
                "resources": {"requests": {"cpu": "1"}},
            }
        ],
        "restartPolicy": "OnFailure",
    }
    if priority:
        spec["priorityClassName"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": "kueue-sleep-",
            "labels": {QUEUE: queue} if queue else {},
            "annotations": {DELAY: run_for},
        },
        "spec": spec,
    }


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return found[0] if found else {}


@pytest.fixture
async def user_queue(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """A flavor of the spot kwok nodes (label + toleration), a ClusterQueue of 1 CPU, user-queue."""
    custom = client.CustomObjectsApi(api)
    flavor, cluster_queue = f"spot-{namespace}", f"cq-{namespace}"
    await custom.create_cluster_custom_object(
        KUEUE,
        V1BETA2,
        "resourceflavors",
        {
            "apiVersion": f"{KUEUE}/{V1BETA2}",
            "kind": "ResourceFlavor",
            "metadata": {"name": flavor},
            "spec": {"nodeLabels": {"instance-type": "spot"}, "tolerations": [SPOT_TOLERATION]},
        },
    )
    await custom.create_cluster_custom_object(
        KUEUE,
        V1BETA2,
        "clusterqueues",
        {
            "apiVersion": f"{KUEUE}/{V1BETA2}",
            "kind": "ClusterQueue",
            "metadata": {"name": cluster_queue},
            "spec": {
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": flavor, "resources": [{"name": "cpu", "nominalQuota": "1"}]}
                        ],
                    }
                ],
            },
        },
    )
    await custom.create_namespaced_custom_object(
        KUEUE,
        V1BETA2,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{KUEUE}/{V1BETA2}",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": cluster_queue},
        },
    )
    yield flavor
    await custom.delete_cluster_custom_object(KUEUE, V1BETA2, "clusterqueues", cluster_queue)
    await custom.delete_cluster_custom_object(KUEUE, V1BETA2, "resourceflavors", flavor)


async def read_pod(core: client.CoreV1Api, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        pod = await core.read_namespaced_pod(name, namespace)
    except ApiException as failure:
        if failure.status == 404:
            return None
        raise
    return dict(core.api_client.sanitize_for_serialization(pod))


def gates(pod: dict[str, Any] | None) -> list[str]:
    return [g["name"] for g in ((pod or {}).get("spec") or {}).get("schedulingGates") or []]


async def workload_of(api: client.ApiClient, namespace: str, pod: str) -> dict[str, Any] | None:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        KUEUE, V1BETA2, namespace, "workloads"
    )
    for item in listed["items"]:
        owners = item["metadata"].get("ownerReferences") or []
        if owners and owners[0]["kind"] == "Pod" and owners[0]["name"] == pod:
            return dict(item)
    return None


async def test_a_queued_pod_waits_gated_while_the_queue_is_full_then_runs_on_the_flavor(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, user_queue: str
) -> None:
    core = client.CoreV1Api(api)
    first = await core.create_namespaced_pod(namespace, sleep_pod(run_for="15s"))
    assert [g.name for g in first.spec.scheduling_gates or []] == GATES
    assert first.metadata.labels[MANAGED] == "true"
    assert MANAGED in (first.metadata.finalizers or [])
    first_name = first.metadata.name

    running = await eventually(
        lambda: read_pod(core, namespace, first_name),
        lambda pod: pod is not None and (pod.get("status") or {}).get("phase") == "Running",
        timeout=90,
        what="the first queued Pod admitted and running",
    )
    # Created only now: two Pods created in the same second have equal creation
    # timestamps, so which of them is first in the queue would be a coin toss.
    second = await core.create_namespaced_pod(namespace, sleep_pod())
    assert [g.name for g in second.spec.scheduling_gates or []] == GATES
    second_name = second.metadata.name
    assert running is not None
    assert gates(running) == []
    assert running["spec"]["nodeSelector"] == {"instance-type": "spot"}
    assert SPOT_TOLERATION in running["spec"]["tolerations"]
    assert running["spec"]["nodeName"].startswith("kwok-spot-")
    workload = await workload_of(api, namespace, first_name)
    assert workload is not None and workload["metadata"]["name"].startswith(f"pod-{first_name}-")
    assert condition(workload, "Admitted").get("status") == "True"

    pending = await eventually(
        lambda: workload_of(api, namespace, second_name),
        lambda wl: wl is not None and condition(wl, "QuotaReserved").get("status") == "False",
        timeout=60,
        what="the second Pod's Workload pending for quota",
    )
    assert pending is not None
    waiting = await read_pod(core, namespace, second_name)
    assert waiting is not None and gates(waiting) == GATES, "the queue is full: still gated"
    assert not waiting["spec"].get("nodeName")
    first_now = await read_pod(core, namespace, first_name)
    assert first_now is not None and first_now["status"]["phase"] == "Running"

    finished = await eventually(
        lambda: workload_of(api, namespace, first_name),
        lambda wl: wl is not None and condition(wl, "Finished").get("status") == "True",
        timeout=90,
        what="the first Pod's Workload finished",
    )
    assert finished is not None and condition(finished, "Finished")["reason"] == "Succeeded"
    done = await eventually(
        lambda: read_pod(core, namespace, first_name),
        lambda pod: pod is not None and MANAGED not in (pod["metadata"].get("finalizers") or []),
        timeout=60,
        what="kuota's finalizer off the finished Pod",
    )
    assert done is not None and done["status"]["phase"] == "Succeeded"

    second_done = await eventually(
        lambda: read_pod(core, namespace, second_name),
        lambda pod: pod is not None and (pod.get("status") or {}).get("phase") == "Succeeded",
        timeout=120,
        what="the second Pod admitted once the first finished, and run",
    )
    assert second_done is not None and second_done["spec"]["nodeName"].startswith("kwok-spot-")


async def test_a_running_pod_preempted_by_a_higher_priority_one_is_deleted(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, user_queue: str
) -> None:
    core, scheduling = client.CoreV1Api(api), client.SchedulingV1Api(api)
    high = f"high-{namespace}"
    await scheduling.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name=high), value=1000)
    )
    try:
        low = await core.create_namespaced_pod(namespace, sleep_pod(run_for="300s"))
        await eventually(
            lambda: read_pod(core, namespace, low.metadata.name),
            lambda pod: pod is not None and (pod.get("status") or {}).get("phase") == "Running",
            timeout=90,
            what="the low-priority Pod running",
        )
        urgent = await core.create_namespaced_pod(namespace, sleep_pod(priority=high))
        await eventually(
            lambda: read_pod(core, namespace, low.metadata.name),
            lambda pod: pod is None,
            timeout=90,
            what="the preempted Pod deleted (its finalizer removed by kuota)",
        )
        admitted = await eventually(
            lambda: read_pod(core, namespace, urgent.metadata.name),
            lambda pod: pod is not None and (pod.get("status") or {}).get("phase") == "Succeeded",
            timeout=120,
            what="the high-priority Pod admitted and run",
        )
        assert admitted is not None and admitted["spec"]["nodeName"].startswith("kwok-spot-")
    finally:
        await scheduling.delete_priority_class(high)


async def test_pods_outside_kuotas_business_are_untouched(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, user_queue: str
) -> None:
    core = client.CoreV1Api(api)
    unqueued = await core.create_namespaced_pod(namespace, sleep_pod(queue=None))
    # kube-system is never managed, a queue name or not
    system = await core.create_namespaced_pod("kube-system", sleep_pod())
    try:
        for created in (unqueued, system):
            assert not created.spec.scheduling_gates
            assert MANAGED not in (created.metadata.labels or {})
            assert not created.metadata.finalizers
        for created in (unqueued, system):
            ran = await eventually(
                lambda created=created: read_pod(
                    core, created.metadata.namespace, created.metadata.name
                ),
                lambda pod: pod is not None and bool(pod["spec"].get("nodeName")),
                timeout=60,
                what="an untouched Pod scheduled by the kube-scheduler alone",
            )
            assert ran is not None and not ran["spec"].get("nodeSelector")
        assert await workload_of(api, namespace, unqueued.metadata.name) is None
    finally:
        await core.delete_namespaced_pod(system.metadata.name, "kube-system")


def group_pod(index: int, group: str, *, cpu: str = "1", run_for: str = "10s") -> dict[str, Any]:
    """A member of Kueue's pod-group example: the group label and total-count annotation."""
    pod = sleep_pod(run_for=run_for)
    pod["metadata"]["generateName"] = f"{group}-{index}-"
    pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = group
    pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = "3"
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    return pod


async def test_a_group_of_three_is_admitted_all_or_nothing(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, user_queue: str
) -> None:
    """1 CPU of quota: a group of three 500m pods never runs partly; one of 300m each runs whole."""
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)

    async def members(group: str) -> list[dict[str, Any]]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector=f"kueue.x-k8s.io/pod-group-name={group}"
        )
        return [dict(core.api_client.sanitize_for_serialization(p)) for p in listed.items]

    async def group_workload(group: str) -> dict[str, Any] | None:
        try:
            found = await custom.get_namespaced_custom_object(
                KUEUE, V1BETA2, namespace, "workloads", group
            )
        except ApiException as failure:
            if failure.status == 404:
                return None
            raise
        return dict(found)

    # Too big as a whole (1.5 CPU > 1): created one by one, no Workload until the third.
    await core.create_namespaced_pod(namespace, group_pod(0, "too-big", cpu="500m"))
    await core.create_namespaced_pod(namespace, group_pod(1, "too-big", cpu="500m"))
    assert await group_workload("too-big") is None, "Kueue waits for every pod of the group"
    await core.create_namespaced_pod(namespace, group_pod(2, "too-big", cpu="500m"))
    pending = await eventually(
        lambda: group_workload("too-big"),
        lambda wl: wl is not None and condition(wl, "QuotaReserved").get("status") == "False",
        timeout=60,
        what="the too-big group's Workload pending for quota",
    )
    assert pending is not None
    (pod_set,) = pending["spec"]["podSets"]
    assert pod_set["count"] == 3
    assert len(pending["metadata"]["ownerReferences"]) == 3
    assert all(gates(pod) == GATES for pod in await members("too-big")), "none started"

    # Fits as a whole (0.9 CPU): every gate comes off together and all three run.
    for index in range(3):
        await core.create_namespaced_pod(namespace, group_pod(index, "fits", cpu="300m"))
    running = await eventually(
        lambda: members("fits"),
        lambda pods: (
            len(pods) == 3 and all((p.get("status") or {}).get("phase") == "Running" for p in pods)
        ),
        timeout=90,
        what="the whole group admitted and running",
    )
    assert all(p["spec"]["nodeName"].startswith("kwok-spot-") for p in running)
    assert all(gates(pod) == GATES for pod in await members("too-big")), "still none started"
    finished = await eventually(
        lambda: group_workload("fits"),
        lambda wl: wl is not None and condition(wl, "Finished").get("status") == "True",
        timeout=90,
        what="the group's Workload finished once its three pods succeeded",
    )
    assert finished is not None
    assert condition(finished, "Finished")["message"] == "Pods succeeded: 3/3."
    cleared = await eventually(
        lambda: members("fits"),
        lambda pods: all(MANAGED not in (p["metadata"].get("finalizers") or []) for p in pods),
        timeout=60,
        what="kuota's finalizers off the finished group",
    )
    assert len(cleared) == 3


async def test_a_queued_deployments_pods_are_queued_one_by_one(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, user_queue: str
) -> None:
    """Two replicas of 1 CPU in a queue of 1 CPU: one pod runs on the flavor, one waits gated."""
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    template = sleep_pod()
    template["metadata"] = {"labels": {"app": "web"}}
    template["spec"]["restartPolicy"] = "Always"
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {QUEUE: "user-queue"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": template,
        },
    }
    created = await apps.create_namespaced_deployment(namespace, deployment)
    marked = created.spec.template.metadata
    assert marked.labels[QUEUE] == "user-queue" and marked.labels[MANAGED] == "true"
    assert marked.annotations["kueue.x-k8s.io/pod-suspending-parent"] == "deployment"

    async def pods() -> list[dict[str, Any]]:
        listed = await core.list_namespaced_pod(namespace, label_selector="app=web")
        return [dict(core.api_client.sanitize_for_serialization(p)) for p in listed.items]

    def split(found: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        running = [p for p in found if (p.get("status") or {}).get("phase") == "Running"]
        return running, [p for p in found if gates(p) == GATES]

    settled = await eventually(
        pods,
        lambda found: [len(part) for part in split(found)] == [1, 1],
        timeout=90,
        what="one replica admitted and running, the other gated",
    )
    running, waiting = split(settled)
    assert running[0]["spec"]["nodeName"].startswith("kwok-spot-")
    assert running[0]["spec"]["nodeSelector"] == {"instance-type": "spot"}
    assert not waiting[0]["spec"].get("nodeName")
    for pod in settled:
        assert not pod["metadata"].get("finalizers"), "a Deployment's pods carry no finalizer"
        workload = await workload_of(api, namespace, pod["metadata"]["name"])
        assert workload is not None, "each pod is its own Workload"
    await apps.delete_namespaced_deployment("web", namespace)


async def test_a_running_group_preempted_by_a_higher_priority_pod_is_stopped_whole(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, user_queue: str
) -> None:
    core, scheduling = client.CoreV1Api(api), client.SchedulingV1Api(api)
    high = f"high-{namespace}"
    await scheduling.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name=high), value=1000)
    )

    async def members() -> list[dict[str, Any]]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector="kueue.x-k8s.io/pod-group-name=low"
        )
        return [dict(core.api_client.sanitize_for_serialization(p)) for p in listed.items]

    try:
        for index in range(3):
            await core.create_namespaced_pod(
                namespace, group_pod(index, "low", cpu="300m", run_for="300s")
            )
        await eventually(
            members,
            lambda pods: (
                len(pods) == 3
                and all((p.get("status") or {}).get("phase") == "Running" for p in pods)
            ),
            timeout=90,
            what="the low-priority group running",
        )
        urgent = await core.create_namespaced_pod(namespace, sleep_pod(priority=high))
        stopped = await eventually(
            members,
            lambda pods: (
                len(pods) == 3 and all(p["metadata"].get("deletionTimestamp") for p in pods)
            ),
            timeout=90,
            what="every pod of the preempted group deleted",
        )
        assert all(MANAGED in (p["metadata"].get("finalizers") or []) for p in stopped), (
            "kept, as Kueue keeps them, until pods replace them"
        )
        admitted = await eventually(
            lambda: read_pod(core, namespace, urgent.metadata.name),
            lambda pod: pod is not None and (pod.get("status") or {}).get("phase") == "Succeeded",
            timeout=120,
            what="the high-priority Pod admitted once the group's quota is back, and run",
        )
        assert admitted is not None
    finally:
        await scheduling.delete_priority_class(high)
