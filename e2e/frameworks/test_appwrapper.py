"""AppWrappers queued by kuota on the local cluster, with the real AppWrapper controller.

The CodeFlare AppWrapper controller (v1.2.2, built from its Go module) creates
the objects an AppWrapper wraps once it is unsuspended, with the placement
kuota wrote into its components' ``podSetInfos``; it reports the AppWrapper
``Succeeded`` once every pod it counts has succeeded.  kuota suspends a queued
AppWrapper at creation and admits it as one Workload of its components' pod
sets (docs/concepts.md#appwrapper): one that does not fit waits suspended, with
nothing created (``kuota explain appwrapper/NAME`` says why), and runs once
the first has finished; the wrapped Job's pods
run on the flavor's kwok nodes; a finished AppWrapper finishes its Workload
and gives the quota back.  A higher-priority AppWrapper preempts a running
one: kuota suspends it and clears its placement, the AppWrapper controller
deletes what it had created, and once the other has finished it is admitted
and created again.
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

GROUP, VERSION, PLURAL = "workload.codeflare.dev", "v1beta2", "appwrappers"
APPWRAPPER_LABEL = "workload.codeflare.dev/appwrapper"


@pytest.fixture
def appwrapper_controller(framework_controllers: FrameworkControllers) -> FrameworkController:
    return framework_controllers.start("appwrapper")


@pytest.fixture
async def queues(api: client.ApiClient, namespace: str) -> AsyncIterator[Queues]:
    """1 CPU: one AppWrapper of two 400m pods fits, not two."""
    created = await create_queues(api, namespace, cpu="1")
    yield created
    await delete_queues(api, created)


def wrapped_job(name: str, *, runs_for: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": runs_for}},
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 1,
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "400m", "memory": "64Mi"}},
                        }
                    ],
                },
            },
        },
    }


def appwrapper(name: str, *, runs_for: str, priority: str = "") -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": "user-queue"}
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "AppWrapper",
        "metadata": {"name": name, "labels": labels},
        "spec": {"components": [{"template": wrapped_job(f"{name}-job", runs_for=runs_for)}]},
    }


class AppWrappers(NamespacedObjects):
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        super().__init__(api, namespace, GROUP, VERSION, PLURAL)

    async def pods(self, name: str) -> list[client.V1Pod]:
        return await pods(self.api, self.namespace, f"{APPWRAPPER_LABEL}={name}")

    async def running(self, name: str) -> list[client.V1Pod]:
        return [p for p in await self.pods(name) if not p.metadata.deletion_timestamp]


def of(name: str) -> Any:
    def check(found: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        for workload in found.values():
            owner = workload["metadata"]["ownerReferences"][0]
            if (owner["kind"], owner["name"]) == ("AppWrapper", name):
                return workload
        return None

    return check


async def test_an_appwrapper_waits_for_quota_runs_its_job_on_the_flavor_and_finishes(
    appwrapper_controller: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    cluster: ClusterHandle,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    wrappers = AppWrappers(api, namespace)
    first = await wrappers.create(appwrapper("first", runs_for="20s"))
    assert first["spec"]["suspend"] is True, "kuota's webhook suspends a queued AppWrapper"
    found = await eventually(
        lambda: workloads(api, namespace),
        lambda got: (wl := of("first")(got)) is not None and is_true(wl, "Admitted"),
        timeout=120,
        what="the first AppWrapper's Workload admitted",
    )
    workload = of("first")(found)
    assert [(p["name"], p["count"]) for p in workload["spec"]["podSets"]] == [("first-0", 2)]
    assert workload["metadata"]["name"].startswith("appwrapper-first-")
    running = await eventually(
        lambda: wrappers.pods("first"),
        lambda got: len(got) == 2 and all(running_on_flavor(p) for p in got),
        timeout=120,
        what="the wrapped Job's two pods running on the flavor's nodes",
    )
    assert all(p.metadata.labels.get("kueue.x-k8s.io/podset") == "first-0" for p in running)

    await wrappers.create(appwrapper("second", runs_for="1s"))
    waiting = await eventually(
        lambda: workloads(api, namespace),
        lambda got: (wl := of("second")(got)) is not None and waiting_for_quota(wl),
        timeout=120,
        what="the second AppWrapper waiting for quota",
    )
    assert of("second")(waiting) is not None
    assert (await wrappers.read("second"))["spec"]["suspend"] is True
    assert await wrappers.pods("second") == [], "a waiting AppWrapper has nothing created"
    explained = await kuota(cluster, "explain", "appwrapper/second", "-n", namespace)
    assert explained.returncode == 0, explained.stderr
    assert "It is pending in LocalQueue user-queue" in explained.stdout, explained.stdout

    done = await eventually(
        lambda: wrappers.read("first"),
        lambda got: (got.get("status") or {}).get("phase") == "Succeeded",
        timeout=120,
        what="the first AppWrapper Succeeded once its Job's pods have",
    )
    assert done["spec"].get("suspend") is not True, "unsuspended (false is left out)"
    await eventually(
        lambda: workloads(api, namespace),
        lambda got: (
            is_true(of("first")(got) or {}, "Finished")
            and is_true(of("second")(got) or {}, "Admitted")
        ),
        timeout=120,
        what="the first Workload finished and the second admitted in its place",
    )
    await eventually(
        lambda: wrappers.read("second"),
        lambda got: (got.get("status") or {}).get("phase") == "Succeeded",
        timeout=120,
        what="the second AppWrapper run to the end",
    )
    await quota_given_back(api, queues, timeout=120, what="the quota given back")


def two_pods_on_the_flavor(found: list[client.V1Pod]) -> bool:
    return len(found) == 2 and all(running_on_flavor(pod) for pod in found)


async def test_an_appwrapper_is_preempted_restored_and_runs_again_after_the_other_finishes(
    appwrapper_controller: FrameworkController,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queues: Queues,
) -> None:
    wrappers = AppWrappers(api, namespace)
    await wrappers.create(appwrapper("low", runs_for="3600s", priority=queues.low))
    await eventually(
        lambda: wrappers.running("low"),
        two_pods_on_the_flavor,
        timeout=120,
        what="the low-priority AppWrapper's pods running on the flavor's nodes",
    )
    low = of("low")(await workloads(api, namespace))
    assert low is not None and low["spec"]["priority"] == 100

    await wrappers.create(appwrapper("high", runs_for="5s", priority=queues.high))
    stopped = await eventually(
        lambda: wrappers.read("low"),
        lambda aw: (
            aw["spec"].get("suspend") is True
            and all("podSetInfos" not in c for c in aw["spec"]["components"])
        ),
        timeout=120,
        what="the low-priority AppWrapper suspended by the preemption, its placement cleared",
    )
    assert stopped["spec"]["components"][0]["template"] == wrapped_job("low-job", runs_for="3600s")
    evicted = of("low")(await workloads(api, namespace))
    assert is_true(evicted or {}, "Evicted") and is_true(evicted or {}, "Preempted")
    await eventually(
        lambda: wrappers.running("low"),
        lambda found: not found,
        timeout=120,
        what="the AppWrapper controller's deletion of what the preempted one had created",
    )
    await eventually(
        lambda: wrappers.read("high"),
        lambda aw: (aw.get("status") or {}).get("phase") == "Succeeded",
        timeout=180,
        what="the high-priority AppWrapper run to the end",
    )
    await eventually(
        lambda: wrappers.running("low"),
        two_pods_on_the_flavor,
        timeout=180,
        what="the preempted AppWrapper admitted again and its Job's pods running on the flavor",
    )
    readmitted = await wrappers.read("low")
    assert readmitted["spec"]["components"][0]["podSetInfos"][0]["nodeSelector"], readmitted
    await wrappers.delete("low")
    await wrappers.delete("high")
    await quota_given_back(api, queues, timeout=120, what="the quota given back")
