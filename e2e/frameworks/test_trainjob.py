"""TrainJobs (Kubeflow Trainer v2) queued by kuota on the local cluster, with the real Trainer.

Kubeflow Trainer (v2.2.1, built from its Go module) builds one JobSet per
TrainJob from the ClusterTrainingRuntime it names (``torch-distributed``: one
replicated job ``node`` of ``numNodes`` pods, each with the TrainJob's
``resourcesPerNode``), with every ``spec.runtimePatches`` entry merged into
that runtime; the JobSet controller makes the Jobs and their pods, and Trainer
reports the TrainJob ``Complete`` once the JobSet has.  kuota suspends a
queued TrainJob at creation and gives it a runtime patch of its own (manager
``kueue.x-k8s.io/manager``), admits it as one Workload of pod set ``node``
(docs/concepts.md), and starts it by writing the flavor's placement into that
patch and unsuspending it, as Kueue v0.19.2 does.  So these tests prove it
with the real controllers, on what a user would look at:

* an admitted TrainJob's pods, made by Trainer's JobSet, run on the flavor's
  kwok nodes; the TrainJob completes, its Workload finishes and the quota goes
  back;
* one that does not fit waits suspended, with no pod (Trainer keeps its
  JobSet, if it made one, suspended), ``kuota explain trainjob/NAME`` says
  why, and it runs once the first has completed;
* a higher-priority TrainJob preempts a running one: kuota suspends it, its
  pods go away, the placement in its runtime patch is cleared (once nothing
  is active, as Trainer requires), and it is admitted and runs again after.

kwok plays the pods (no container runs): a pod of a Job completes after the
delay in its ``pod-complete.stage.kwok.x-k8s.io/delay`` annotation, which each
TrainJob here sets on its pods through a runtime patch of its own (manager
``kuota.test/e2e``), the way a user adds pod metadata to a TrainJob.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from e2e.cluster.frameworks import FrameworkController
from e2e.cluster.jobset import JobSetController
from e2e.cluster.kwok_config import DELAY_ANNOTATION

from ..conftest import FrameworkControllers
from ..fixtures import ClusterHandle
from ..kuota_scheduler import SchedulerReplica
from ..test_user_commands import kuota
from ..waiting import eventually
from .queues import (
    NamespacedObjects,
    Queues,
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

GROUP, VERSION, PLURAL = "trainer.kubeflow.org", "v1alpha1", "trainjobs"
JOBSET_GROUP, JOBSET_VERSION, JOBSETS = "jobset.x-k8s.io", "v1alpha2", "jobsets"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
KUEUE_MANAGER = "kueue.x-k8s.io/manager"
"""The manager of the runtime patch kuota's webhook adds and its scheduler writes (Kueue's)."""
TEST_MANAGER = "kuota.test/e2e"
"""The manager of the tests' own runtime patch (kwok's completion delay on the pods)."""
RUNTIME = "torch-distributed"
POD_SET = "node"


@pytest.fixture
def trainer(
    jobset: JobSetController, framework_controllers: FrameworkControllers
) -> FrameworkController:
    """Trainer makes a JobSet per TrainJob and watches them: the JobSet controller first."""
    return framework_controllers.start("trainer")


@pytest.fixture
async def queues(api: client.ApiClient, namespace: str) -> AsyncIterator[Queues]:
    """1 CPU: one TrainJob of two 400m nodes fits, not two."""
    created = await create_queues(api, namespace, cpu="1")
    yield created
    await delete_queues(api, created)


def trainjob(name: str, *, runs_for: str, priority: str = "") -> dict[str, Any]:
    """A queued TrainJob of two 400m nodes whose pods kwok completes after ``runs_for``."""
    labels = {"kueue.x-k8s.io/queue-name": "user-queue"}
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    pod_metadata = {"metadata": {"annotations": {DELAY_ANNOTATION: runs_for}}}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "TrainJob",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "runtimeRef": {"name": RUNTIME, "apiGroup": GROUP, "kind": "ClusterTrainingRuntime"},
            "trainer": {
                "numNodes": 2,
                "image": "busybox",
                "command": ["sh", "-c", "exit 0"],
                "resourcesPerNode": {"requests": {"cpu": "400m", "memory": "64Mi"}},
            },
            "runtimePatches": [
                {
                    "manager": TEST_MANAGER,
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": POD_SET,
                                        "template": {"spec": {"template": pod_metadata}},
                                    }
                                ]
                            }
                        }
                    },
                }
            ],
        },
    }


def runtime_patch(job: dict[str, Any], manager: str = KUEUE_MANAGER) -> dict[str, Any] | None:
    return next(
        (p for p in job["spec"].get("runtimePatches") or [] if p.get("manager") == manager), None
    )


def placement(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The replicated jobs of kuota's runtime patch: the admitted placement, none when stopped."""
    patch = runtime_patch(job) or {}
    template = (patch.get("trainingRuntimeSpec") or {}).get("template") or {}
    found: list[dict[str, Any]] = (template.get("spec") or {}).get("replicatedJobs") or []
    return found


def node_selector(job: dict[str, Any]) -> dict[str, str]:
    """The nodeSelector kuota's runtime patch gives the pods of replicated job ``node``."""
    for replicated in placement(job):
        if replicated.get("name") == POD_SET:
            pod = ((replicated.get("template") or {}).get("spec") or {}).get("template") or {}
            selector: dict[str, str] = (pod.get("spec") or {}).get("nodeSelector") or {}
            return selector
    return {}


class TrainJobs(NamespacedObjects):
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        super().__init__(api, namespace, GROUP, VERSION, PLURAL)

    async def jobset(self, name: str) -> dict[str, Any] | None:
        """The JobSet Trainer made for the TrainJob (same name), if any."""
        try:
            found: dict[str, Any] = await self.custom.get_namespaced_custom_object(
                JOBSET_GROUP, JOBSET_VERSION, self.namespace, JOBSETS, name
            )
        except client.ApiException as failure:
            if failure.status == 404:
                return None
            raise
        return found

    async def live_pods(self, name: str) -> list[client.V1Pod]:
        """The pods of the TrainJob's JobSet that are not being deleted."""
        found = await pods(self.api, self.namespace, f"{JOBSET_NAME_LABEL}={name}")
        return [p for p in found if not p.metadata.deletion_timestamp]


def of(name: str) -> Any:
    def check(found: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        for workload in found.values():
            owner = workload["metadata"]["ownerReferences"][0]
            if (owner["kind"], owner["name"]) == ("TrainJob", name):
                return workload
        return None

    return check


def two_nodes_on_the_flavor(found: list[client.V1Pod]) -> bool:
    return len(found) == 2 and all(running_on_flavor(pod) for pod in found)


def suspended_with_nothing_running(jobset: dict[str, Any] | None) -> bool:
    return jobset is None or jobset["spec"].get("suspend") is True


async def test_a_trainjob_is_admitted_runs_on_the_flavor_and_completes(
    trainer: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    jobs = TrainJobs(api, namespace)
    created = await jobs.create(trainjob("train", runs_for="20s"))
    assert created["spec"]["suspend"] is True, "kuota's webhook suspends a queued TrainJob"
    managers = [p["manager"] for p in created["spec"]["runtimePatches"]]
    assert managers == [TEST_MANAGER, KUEUE_MANAGER], "kuota's runtime patch appended to ours"
    assert placement(created) == [], "no placement before admission"

    found = await eventually(
        lambda: workloads(api, namespace),
        lambda got: (wl := of("train")(got)) is not None and is_true(wl, "Admitted"),
        timeout=120,
        what="the TrainJob's Workload admitted",
    )
    workload = of("train")(found)
    assert workload["metadata"]["name"].startswith("trainjob-train-"), workload["metadata"]
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [(POD_SET, 2)]
    requests = workload["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]
    assert requests["requests"]["cpu"] == "400m", "the pod set is the node's resourcesPerNode"

    running = await eventually(
        lambda: jobs.live_pods("train"),
        two_nodes_on_the_flavor,
        timeout=120,
        what="the two nodes of Trainer's JobSet running on the flavor's nodes",
    )
    assert all(p.metadata.labels.get("kueue.x-k8s.io/podset") == POD_SET for p in running)
    started = await jobs.read("train")
    assert started["spec"].get("suspend") is not True
    assert node_selector(started) == {"instance-type": "ondemand"}, runtime_patch(started)
    explained = await kuota(cluster, "explain", "trainjob/train", "-n", namespace)
    assert explained.returncode == 0, explained.stderr
    assert "admitted" in explained.stdout, explained.stdout

    done = await eventually(
        lambda: jobs.read("train"),
        lambda got: is_true(got, "Complete"),
        timeout=120,
        what="the TrainJob Complete once its JobSet's pods have",
    )
    assert not is_true(done, "Failed"), done["status"]
    await eventually(
        lambda: workloads(api, namespace),
        lambda got: is_true(of("train")(got) or {}, "Finished"),
        timeout=120,
        what="the TrainJob's Workload finished",
    )
    await quota_given_back(api, queues, timeout=120, what="the quota given back")


async def test_a_trainjob_that_does_not_fit_waits_suspended_and_runs_after_the_first(
    trainer: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    jobs = TrainJobs(api, namespace)
    await jobs.create(trainjob("first", runs_for="60s"))
    await eventually(
        lambda: jobs.live_pods("first"),
        two_nodes_on_the_flavor,
        timeout=120,
        what="the first TrainJob's nodes running on the flavor's nodes",
    )

    await jobs.create(trainjob("second", runs_for="1s"))
    waiting = await eventually(
        lambda: workloads(api, namespace),
        lambda got: (wl := of("second")(got)) is not None and waiting_for_quota(wl),
        timeout=120,
        what="the second TrainJob waiting for quota",
    )
    assert not is_true(of("second")(waiting), "Admitted")
    second = await jobs.read("second")
    assert second["spec"]["suspend"] is True, "a waiting TrainJob stays suspended"
    assert placement(second) == [], runtime_patch(second)
    jobset = await jobs.jobset("second")
    assert suspended_with_nothing_running(jobset), "Trainer's JobSet, if any, stays suspended"
    assert await jobs.live_pods("second") == [], "a waiting TrainJob has no pods"
    explained = await kuota(cluster, "explain", "trainjob/second", "-n", namespace)
    assert explained.returncode == 0, explained.stderr
    assert "It is pending in LocalQueue user-queue" in explained.stdout, explained.stdout
    assert "insufficient unused quota for cpu" in explained.stdout, explained.stdout

    await eventually(
        lambda: jobs.read("first"),
        lambda got: is_true(got, "Complete"),
        timeout=120,
        what="the first TrainJob Complete",
    )
    await eventually(
        lambda: workloads(api, namespace),
        lambda got: (
            is_true(of("first")(got) or {}, "Finished")
            and is_true(of("second")(got) or {}, "Admitted")
        ),
        timeout=120,
        what="the first Workload finished and the second admitted in its place",
    )
    # The Workload is admitted first; kuota then writes the placement into the TrainJob.
    await eventually(
        lambda: jobs.read("second"),
        lambda got: node_selector(got) == {"instance-type": "ondemand"},
        timeout=60,
        what="the second TrainJob started with the flavor's nodeSelector",
    )
    await eventually(
        lambda: jobs.read("second"),
        lambda got: is_true(got, "Complete"),
        timeout=120,
        what="the second TrainJob run to completion",
    )
    await quota_given_back(api, queues, timeout=120, what="the quota given back")


async def test_a_trainjob_is_preempted_restored_and_admitted_again(
    trainer: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    jobs = TrainJobs(api, namespace)
    await jobs.create(trainjob("low", runs_for="3600s", priority=queues.low))
    await eventually(
        lambda: jobs.live_pods("low"),
        two_nodes_on_the_flavor,
        timeout=120,
        what="the low-priority TrainJob's nodes running on the flavor's nodes",
    )
    low = of("low")(await workloads(api, namespace))
    assert low is not None and low["spec"]["priority"] == 100
    assert node_selector(await jobs.read("low")) == {"instance-type": "ondemand"}

    await jobs.create(trainjob("high", runs_for="5s", priority=queues.high))
    stopped = await eventually(
        lambda: jobs.read("low"),
        lambda job: job["spec"].get("suspend") is True and placement(job) == [],
        timeout=120,
        what="the low-priority TrainJob suspended by the preemption, its placement cleared",
    )
    (as_created,) = trainjob("low", runs_for="3600s")["spec"]["runtimePatches"]
    ours = runtime_patch(stopped, TEST_MANAGER) or {}
    assert ours.get("trainingRuntimeSpec") == as_created["trainingRuntimeSpec"], (
        "the TrainJob's own runtime patch is left as it was"
    )
    assert runtime_patch(stopped) is not None, "kuota's runtime patch stays, emptied"
    evicted = of("low")(await workloads(api, namespace))
    assert is_true(evicted or {}, "Evicted") and is_true(evicted or {}, "Preempted")
    await eventually(
        lambda: jobs.live_pods("low"),
        lambda found: not found,
        timeout=120,
        what="the preempted TrainJob's pods gone",
    )
    assert suspended_with_nothing_running(await jobs.jobset("low"))

    await eventually(
        lambda: jobs.read("high"),
        lambda job: is_true(job, "Complete"),
        timeout=180,
        what="the high-priority TrainJob run to completion",
    )
    await eventually(
        lambda: jobs.live_pods("low"),
        two_nodes_on_the_flavor,
        timeout=180,
        what="the preempted TrainJob admitted again and its nodes running on the flavor",
    )
    readmitted = await jobs.read("low")
    assert readmitted["spec"].get("suspend") is not True
    assert node_selector(readmitted) == {"instance-type": "ondemand"}, runtime_patch(readmitted)
    assert is_true(of("low")(await workloads(api, namespace)) or {}, "Admitted")
    await jobs.delete("low")
    await jobs.delete("high")
    await quota_given_back(api, queues, timeout=120, what="the quota given back")
