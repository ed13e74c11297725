"""JobSets queued by kuota on the local cluster, with the real JobSet controller.

Kueue's own example (seed 003's ``sample-jobset.yaml``: one replicated job of
one pod asking for 1 CPU, ``priorityClassName: high-priority``, queue
``user-queue``) is created as a user would, twice, against a ClusterQueue of
1 CPU: kuota's webhook suspends each JobSet at creation, each gets a
Workload owned by it with the PriorityClass's priority, one is admitted and
the other waits for quota; the admitted one is unsuspended with the flavor's
node labels in its replicated job's pod template, its pod runs on a kwok
node of that flavor with the PriorityClass honoured, it completes, its
Workload finishes, and then the second one runs to completion too.  Run on
its own, the scheduler starts before the JobSet CRD is installed and picks
JobSets up when it looks again (within a minute).  A lower-priority JobSet
running on the quota is preempted by the seed's: suspended by kuota, its
template restored, the seed's admitted and run.  ``kuota explain jobset/NAME``
and ``kuota status`` read the JobSets as a user runs them; kuota's validating
webhook holds JobSets to the rules of Kueue's JobSet webhook (queue name
fixed while running, priority-class label rules) and to JOB-K1 (only kuota's
scheduler unsuspends a queued JobSet).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from e2e.cluster.jobset import JobSetController
from tests.api.seed_examples import documents

from .fixtures import ClusterHandle
from .kuota_scheduler import SchedulerReplica
from .test_user_commands import kuota
from .waiting import eventually

pytestmark = pytest.mark.cluster

KUEUE, V1BETA2 = "kueue.x-k8s.io", "v1beta2"
JOBSETS = ("jobset.x-k8s.io", "v1alpha2")
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
PRIORITY_CLASS, PRIORITY = "high-priority", 1000


def seed_jobset() -> dict[str, Any]:
    (seed,) = [doc for doc in documents() if doc.kind == "JobSet" and doc.source.startswith("003")]
    return dict(seed.raw)


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next(
        (c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None
    )


def is_true(obj: dict[str, Any], kind: str) -> bool:
    return (condition(obj, kind) or {}).get("status") == "True"


@pytest.fixture
async def user_queue(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """A flavor of the on-demand kwok nodes, a ClusterQueue of 1 CPU, the seed's LocalQueue
    and PriorityClass."""
    custom = client.CustomObjectsApi(api)
    scheduling = client.SchedulingV1Api(api)
    flavor, cluster_queue = f"ondemand-{namespace}", f"cq-{namespace}"
    await scheduling.create_priority_class(
        client.V1PriorityClass(metadata=client.V1ObjectMeta(name=PRIORITY_CLASS), value=PRIORITY)
    )
    await custom.create_cluster_custom_object(
        KUEUE,
        V1BETA2,
        "resourceflavors",
        {
            "apiVersion": f"{KUEUE}/{V1BETA2}",
            "kind": "ResourceFlavor",
            "metadata": {"name": flavor},
            "spec": {"nodeLabels": {"instance-type": "ondemand"}},
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
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": flavor,
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "1"},
                                    {"name": "memory", "nominalQuota": "1Gi"},
                                ],
                            }
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
    await scheduling.delete_priority_class(PRIORITY_CLASS)


async def test_the_seed_jobset_is_queued_admitted_within_quota_and_runs_to_completion(
    kuota_scheduler: SchedulerReplica,  # first: a scheduler that starts before the CRD...
    jobset: JobSetController,  # ...finds JobSets once it is installed
    api: client.ApiClient,
    namespace: str,
    user_queue: str,
) -> None:
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    created = [
        await custom.create_namespaced_custom_object(*JOBSETS, namespace, "jobsets", seed_jobset())
        for _ in range(2)
    ]
    names = [js["metadata"]["name"] for js in created]
    assert all(name.startswith("sleep-job-") for name in names)
    for stored in created:
        assert stored["spec"]["suspend"] is True, "kuota's webhook suspends a queued JobSet"

    async def workloads() -> dict[str, dict[str, Any]]:
        listed = await custom.list_namespaced_custom_object(KUEUE, V1BETA2, namespace, "workloads")
        return {
            item["metadata"]["ownerReferences"][0]["name"]: item
            for item in listed["items"]
            if item["metadata"]["ownerReferences"][0]["kind"] == "JobSet"
        }

    def one_admitted_one_waiting(found: dict[str, dict[str, Any]]) -> bool:
        reserved = [is_true(wl, "QuotaReserved") for wl in found.values()]
        waiting = [
            (condition(wl, "QuotaReserved") or {}).get("reason") == "WaitingForQuota"
            for wl in found.values()
        ]
        return len(found) == 2 and reserved.count(True) == 1 and waiting.count(True) == 1

    # 120 s: a scheduler started before the JobSet CRD looks for it again every 60 s.
    found = await eventually(
        workloads, one_admitted_one_waiting, timeout=120, what="one JobSet admitted, one waiting"
    )
    assert sorted(found) == sorted(names)
    for workload in found.values():
        (pod_set,) = workload["spec"]["podSets"]
        assert (pod_set["name"], pod_set["count"]) == ("workers", 1)
        assert workload["spec"]["queueName"] == "user-queue"
        assert workload["spec"]["priorityClassRef"]["name"] == PRIORITY_CLASS
        assert workload["spec"]["priority"] == PRIORITY
        assert (
            workload["metadata"]["ownerReferences"][0]["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
        )
    (first,) = [name for name, wl in found.items() if is_true(wl, "QuotaReserved")]
    (second,) = [name for name in names if name != first]
    waiting = condition(found[second], "QuotaReserved") or {}
    assert "insufficient unused quota for cpu" in waiting.get("message", ""), waiting
    (assignment,) = found[first]["status"]["admission"]["podSetAssignments"]
    assert assignment["flavors"] == {"cpu": user_queue, "memory": user_queue}

    async def read(name: str) -> dict[str, Any]:
        got: dict[str, Any] = await custom.get_namespaced_custom_object(
            *JOBSETS, namespace, "jobsets", name
        )
        return got

    started = await eventually(
        lambda: read(first),
        lambda js: js["spec"].get("suspend") is False,
        timeout=30,
        what="the admitted JobSet unsuspended",
    )
    pod_spec = started["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == {"instance-type": "ondemand"}
    assert (await read(second))["spec"]["suspend"] is True, "the second one waits, suspended"

    async def pods_of(name: str) -> list[client.V1Pod]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector=f"{JOBSET_NAME_LABEL}={name}"
        )
        return list(listed.items)

    (pod,) = await eventually(
        lambda: pods_of(first),
        lambda items: len(items) == 1 and bool(items[0].spec.node_name),
        timeout=60,
        what="the admitted JobSet's pod bound",
    )
    assert pod.spec.node_name.startswith("kwok-ondemand-"), pod.spec.node_name
    assert pod.spec.node_selector == {"instance-type": "ondemand"}
    assert (pod.spec.priority_class_name, pod.spec.priority) == (PRIORITY_CLASS, PRIORITY)

    for name in (first, second):
        done = await eventually(
            lambda name=name: read(name),  # type: ignore[misc]
            lambda js: is_true(js, "Completed") or is_true(js, "Failed"),
            timeout=180,
            what=f"JobSet {name} finished",
        )
        assert is_true(done, "Completed"), done.get("status")
        finished = await eventually(
            workloads,
            lambda got, name=name: is_true(got[name], "Finished"),  # type: ignore[misc]
            timeout=60,
            what=f"the Workload of {name} Finished",
        )
        assert condition(finished[name], "Finished")["reason"] == "Succeeded"  # type: ignore[index]
    second_pods = await pods_of(second)
    assert [p.spec.node_selector for p in second_pods] == [{"instance-type": "ondemand"}]
    listed = await custom.list_namespaced_custom_object(KUEUE, V1BETA2, namespace, "workloads")
    assert len(listed["items"]) == 2, "the JobSets' child Jobs get no Workloads of their own"

    async def reasons() -> set[tuple[str, str]]:
        events = await core.list_namespaced_event(namespace)
        return {
            (e.involved_object.name, e.reason)
            for e in events.items
            if e.involved_object.kind == "JobSet"
        }

    wanted = {(name, reason) for name in names for reason in ("CreatedWorkload", "Started")}
    await eventually(
        reasons, lambda got: wanted <= got, timeout=30, what="kuota's Events on the JobSets"
    )


async def test_the_seed_jobset_preempts_a_lower_priority_jobset_which_is_stopped_and_restored(
    jobset: JobSetController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    user_queue: str,
) -> None:
    custom, core = client.CustomObjectsApi(api), client.CoreV1Api(api)
    low = seed_jobset()
    low["metadata"] = {"name": "low", "labels": dict(low["metadata"]["labels"])}
    low_pod = low["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    del low_pod["spec"]["priorityClassName"]
    # kwok keeps the pod running until it is deleted (no completion for an hour)
    low_pod["metadata"] = {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "3600s"}}
    await custom.create_namespaced_custom_object(*JOBSETS, namespace, "jobsets", low)

    async def read(name: str) -> dict[str, Any]:
        got: dict[str, Any] = await custom.get_namespaced_custom_object(
            *JOBSETS, namespace, "jobsets", name
        )
        return got

    async def running_pods(name: str) -> list[client.V1Pod]:
        listed = await core.list_namespaced_pod(
            namespace, label_selector=f"{JOBSET_NAME_LABEL}={name}"
        )
        return [p for p in listed.items if p.status.phase == "Running"]

    await eventually(
        lambda: running_pods("low"),
        lambda pods: len(pods) == 1,
        timeout=120,
        what="the low-priority JobSet running",
    )
    started = await read("low")
    low_spec = started["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert low_spec["nodeSelector"] == {"instance-type": "ondemand"}

    high = await custom.create_namespaced_custom_object(
        *JOBSETS, namespace, "jobsets", seed_jobset()
    )
    high_name = high["metadata"]["name"]

    stopped = await eventually(
        lambda: read("low"),
        lambda js: js["spec"].get("suspend") is True,
        timeout=60,
        what="the low-priority JobSet suspended by the preemption",
    )
    restored = stopped["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert "nodeSelector" not in restored["spec"], "kuota's placement is taken off again"
    assert restored["metadata"] == low_pod["metadata"], "what the user wrote is kept"

    async def workloads() -> dict[str, dict[str, Any]]:
        listed = await custom.list_namespaced_custom_object(KUEUE, V1BETA2, namespace, "workloads")
        return {item["metadata"]["ownerReferences"][0]["name"]: item for item in listed["items"]}

    found = await eventually(
        workloads,
        lambda got: high_name in got and is_true(got[high_name], "QuotaReserved"),
        timeout=60,
        what="the high-priority JobSet admitted",
    )
    evicted = condition(found["low"], "Evicted") or {}
    assert (evicted.get("status"), evicted.get("reason")) == ("True", "Preempted"), evicted
    assert not is_true(found["low"], "QuotaReserved")
    done = await eventually(
        lambda: read(high_name),
        lambda js: is_true(js, "Completed") or is_true(js, "Failed"),
        timeout=180,
        what="the high-priority JobSet finished",
    )
    assert is_true(done, "Completed"), done.get("status")


async def test_an_unqueued_jobset_gets_the_namespaces_default_local_queue(
    jobset: JobSetController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    user_queue: str,
) -> None:
    custom = client.CustomObjectsApi(api)
    await custom.create_namespaced_custom_object(
        KUEUE,
        V1BETA2,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{KUEUE}/{V1BETA2}",
            "kind": "LocalQueue",
            "metadata": {"name": "default"},
            "spec": {"clusterQueue": f"cq-{namespace}"},
        },
    )
    unqueued = seed_jobset()
    unqueued["metadata"] = {"name": "unqueued"}

    async def dry_run() -> dict[str, Any]:
        created: dict[str, Any] = await custom.create_namespaced_custom_object(
            *JOBSETS, namespace, "jobsets", unqueued, dry_run="All"
        )
        return created

    # The webhook's lookup of the LocalQueue may lag its creation by a moment.
    accepted = await eventually(
        dry_run,
        lambda js: (
            (js["metadata"].get("labels") or {}).get("kueue.x-k8s.io/queue-name") == "default"
        ),
        timeout=30,
        what="the default LocalQueue set on an unqueued JobSet",
    )
    assert accepted["spec"]["suspend"] is True


async def test_the_webhook_holds_jobsets_to_kueues_rules_and_kuota_explains_a_waiting_one(
    jobset: JobSetController,
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    user_queue: str,
) -> None:
    custom = client.CustomObjectsApi(api)
    queue_label, priority_label = "kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class"

    async def merge_patch(name: str, patch: dict[str, Any]) -> None:
        await custom.patch_namespaced_custom_object(
            *JOBSETS,
            namespace,
            "jobsets",
            name,
            patch,
            _content_type="application/merge-patch+json",
        )

    async def refused(call: Any) -> str:
        with pytest.raises(ApiException) as caught:
            await call
        body = str(caught.value.body)
        assert "denied the request" in body, body
        return body

    bad = seed_jobset()
    bad["metadata"] = {"name": "bad", "labels": {queue_label: "User_Queue"}}
    body = await refused(
        custom.create_namespaced_custom_object(*JOBSETS, namespace, "jobsets", bad)
    )
    assert "is not a valid LocalQueue name" in body, body

    # A JobSet whose LocalQueue does not exist stays suspended: the user may not start it.
    held = seed_jobset()
    held["metadata"] = {"name": "held", "labels": {queue_label: "nowhere"}}
    await custom.create_namespaced_custom_object(*JOBSETS, namespace, "jobsets", held)
    body = await refused(merge_patch("held", {"spec": {"suspend": False}}))
    assert "can be unsuspended only by kuota's scheduler" in body, body
    # While suspended, it may move to another LocalQueue.
    await merge_patch("held", {"metadata": {"labels": {queue_label: "elsewhere"}}})

    running = seed_jobset()
    running["metadata"] = {"name": "running", "labels": {queue_label: "user-queue"}}
    pod = running["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    pod["metadata"] = {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "3600s"}}
    await custom.create_namespaced_custom_object(*JOBSETS, namespace, "jobsets", running)

    async def read() -> dict[str, Any]:
        got: dict[str, Any] = await custom.get_namespaced_custom_object(
            *JOBSETS, namespace, "jobsets", "running"
        )
        return got

    await eventually(
        read,
        lambda js: js["spec"].get("suspend") is False,
        timeout=60,
        what="the queued JobSet started by kuota",
    )
    body = await refused(
        merge_patch("running", {"metadata": {"labels": {queue_label: "other-queue"}}})
    )
    assert "cannot change while the job is running (not suspended)" in body, body
    body = await refused(merge_patch("running", {"metadata": {"labels": {priority_label: "high"}}}))
    assert "a WorkloadPriorityClass cannot be added to a running (not suspended) job" in body
    stored = await read()
    assert stored["metadata"]["labels"] == {queue_label: "user-queue"}, "nothing changed"

    # A second JobSet waits for the CPU the running one holds (for an hour): the user asks
    # why, by the JobSet's name, and sees the ClusterQueue's state.
    waiting = seed_jobset()
    waiting["metadata"] = {"name": "waiting", "labels": {queue_label: "user-queue"}}
    await custom.create_namespaced_custom_object(*JOBSETS, namespace, "jobsets", waiting)

    async def workloads() -> dict[str, dict[str, Any]]:
        listed = await custom.list_namespaced_custom_object(KUEUE, V1BETA2, namespace, "workloads")
        return {item["metadata"]["ownerReferences"][0]["name"]: item for item in listed["items"]}

    found = await eventually(
        workloads,
        lambda got: (
            (condition(got.get("waiting", {}), "QuotaReserved") or {}).get("reason")
            == "WaitingForQuota"
        ),
        timeout=60,
        what="the second JobSet waiting for quota",
    )
    explained = await kuota(cluster, "explain", "jobset/waiting", "-n", namespace)
    assert explained.returncode == 0, explained.stderr
    lines = explained.stdout.splitlines()
    assert lines[0] == (
        f"JobSet {namespace}/waiting (Workload {found['waiting']['metadata']['name']}):"
    ), explained.stdout
    assert lines[1] == f"It is pending in LocalQueue user-queue -> ClusterQueue cq-{namespace}."
    assert lines[3] == (
        "Why (WaitingForQuota): couldn't assign flavors to pod set workers: insufficient unused "
        f"quota for cpu in flavor {user_queue}, 1 more needed"
    ), explained.stdout
    assert lines[-1] == (
        f"  - 1 cpu in flavor {user_queue} (in use: 1 of 1); held by jobset/running (1)"
    ), explained.stdout
    by_name = await kuota(cluster, "explain", "running", "-n", namespace)
    assert by_name.returncode == 0, by_name.stderr
    assert by_name.stdout.splitlines()[0].startswith(f"JobSet {namespace}/running (Workload ")
    status = await kuota(cluster, "status")
    assert status.returncode == 0, status.stderr
    block = status.stdout.split(f"ClusterQueue cq-{namespace}  ", 1)[1].split("\n\n", 1)[0]
    assert block.startswith("pending 1  admitted 1"), status.stdout
    assert f"{user_queue}  cpu       [####################]   1/1 (100%)" in block, block
