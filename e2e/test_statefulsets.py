"""StatefulSets queued by kuota on the local cluster, as Kueue v0.19 queues them.

A queued StatefulSet's pods form one pod group whose Workload the scheduler
makes from the StatefulSet, named from its name and UID
(docs/concepts.md#statefulsets).  Against a ClusterQueue of 1 CPU on the spot
kwok nodes: three replicas of 300m are admitted whole and run; scaled to
zero, the Workload stays, gives its quota back and is held (``OnHold``);
scaled up again, it is admitted again and the pods run.  While it runs, its
replica count cannot change but to zero (Kueue's webhook rule).  A StatefulSet made
with a queue that does not exist waits gated; once its queue name is changed,
its pod and Workload follow and it runs, with no new revision of its
template.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.rest import ApiException

from scheduler.jobs.statefulset import group_name

from .kuota_scheduler import SchedulerReplica
from .test_pods import KUEUE, QUEUE, V1BETA2, condition, gates, sleep_pod, user_queue
from .waiting import eventually

pytestmark = pytest.mark.cluster

__all__ = ["user_queue"]  # the fixture, shared with the Pod tests


def db(replicas: int, queue: str = "user-queue") -> dict[str, Any]:
    """A StatefulSet ``db`` of 300m pods (kwok runs them until they are deleted)."""
    template = sleep_pod()
    template["metadata"] = {"labels": {"app": "db"}}
    template["spec"]["restartPolicy"] = "Always"
    template["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "300m"
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "labels": {QUEUE: queue}},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": template,
        },
    }


class Cluster:
    """What the tests read: the set's pods and its Workload."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.core, self.apps = client.CoreV1Api(api), client.AppsV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.namespace = namespace

    async def pods(self) -> list[dict[str, Any]]:
        listed = await self.core.list_namespaced_pod(self.namespace, label_selector="app=db")
        return [dict(self.core.api_client.sanitize_for_serialization(p)) for p in listed.items]

    async def workloads(self) -> list[dict[str, Any]]:
        listed = await self.custom.list_namespaced_custom_object(
            KUEUE, V1BETA2, self.namespace, "workloads"
        )
        return [dict(item) for item in listed["items"]]

    async def scale(self, replicas: int) -> None:
        await self.apps.patch_namespaced_stateful_set(
            "db", self.namespace, {"spec": {"replicas": replicas}}
        )


def running(count: int) -> Any:
    return lambda found: (
        len(found) == count
        and all((p.get("status") or {}).get("phase") == "Running" and not gates(p) for p in found)
    )


async def test_a_statefulset_is_admitted_whole_held_at_zero_and_admitted_again(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, user_queue: str
) -> None:
    cluster = Cluster(api, namespace)
    created = await cluster.apps.create_namespaced_stateful_set(namespace, db(3))
    template = created.spec.template.metadata
    assert "kueue.x-k8s.io/pod-group-name" not in (template.labels or {}), "no UID on create"
    name = group_name(cluster.apps.api_client.sanitize_for_serialization(created))
    pods = await eventually(
        cluster.pods, running(3), timeout=120, what="three pods admitted as one group, running"
    )
    assert all(p["spec"]["nodeName"].startswith("kwok-spot-") for p in pods)
    assert {p["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-name"] for p in pods} == {name}
    [workload] = await cluster.workloads()
    assert workload["metadata"]["name"] == name, "Kueue's name: the StatefulSet's name and UID"
    assert workload["metadata"]["labels"]["kueue.x-k8s.io/job-uid"] == created.metadata.uid
    assert [p["count"] for p in workload["spec"]["podSets"]] == [3]
    assert condition(workload, "Admitted").get("status") == "True"
    assert [o["kind"] for o in workload["metadata"]["ownerReferences"]] == ["StatefulSet"]

    with pytest.raises(ApiException) as refused:
        await cluster.scale(4)
    assert "may change only to or from 0" in str(refused.value.body), "the Workload counts 3"

    await cluster.scale(0)
    [held] = await eventually(
        cluster.workloads,
        lambda found: (
            len(found) == 1 and condition(found[0], "QuotaReserved").get("reason") == "OnHold"
        ),
        timeout=60,
        what="the Workload kept, on hold, its quota given back",
    )
    assert condition(held, "QuotaReserved")["status"] == "False"
    assert "admission" not in (held.get("status") or {})
    await eventually(cluster.pods, lambda found: not found, timeout=60, what="the pods gone")

    await cluster.scale(3)
    await eventually(cluster.pods, running(3), timeout=120, what="three pods running again")
    [again] = await cluster.workloads()
    assert again["metadata"]["uid"] == workload["metadata"]["uid"], "the same Workload"
    assert condition(again, "Admitted").get("status") == "True"
    await cluster.apps.delete_namespaced_stateful_set("db", namespace)


async def test_a_statefulset_waiting_on_a_missing_queue_follows_its_new_queue_name(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, user_queue: str
) -> None:
    cluster = Cluster(api, namespace)
    created = await cluster.apps.create_namespaced_stateful_set(namespace, db(1, "missing"))
    name = group_name(cluster.apps.api_client.sanitize_for_serialization(created))
    [waiting] = await eventually(
        cluster.pods,
        lambda found: len(found) == 1 and gates(found[0]) != [],
        timeout=60,
        what="the pod made, gated, in the missing queue",
    )
    assert waiting["metadata"]["labels"][QUEUE] == "missing"
    await cluster.apps.patch_namespaced_stateful_set(
        "db", namespace, {"metadata": {"labels": {QUEUE: "user-queue"}}}
    )
    [pod] = await eventually(cluster.pods, running(1), timeout=120, what="the pod running")
    assert pod["metadata"]["labels"][QUEUE] == "user-queue"
    assert pod["metadata"]["uid"] == waiting["metadata"]["uid"], "no new revision replaced it"
    [workload] = await cluster.workloads()
    assert (workload["metadata"]["name"], workload["spec"]["queueName"]) == (name, "user-queue")
    assert condition(workload, "Admitted").get("status") == "True"
    await cluster.apps.delete_namespaced_stateful_set("db", namespace)
