"""LimitRange defaults and RuntimeClass overhead are charged on a real cluster
(docs/scheduling.md#workload-usage).

In a namespace whose LimitRange gives containers a default request of one CPU,
Jobs that ask for nothing are each charged one CPU: two of them fill a 2-CPU
ClusterQueue, the third waits, and the admissions record the CPU in their
``resourceUsage`` as Kueue's do (the Workloads themselves keep the Jobs'
templates).  A Job on a RuntimeClass with a pod overhead is charged its
requests plus the overhead.  The scheduler reads both kinds with the chart's
permissions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from .kuota_scheduler import SchedulerReplica
from .test_reclaimable_pods import reserved, two_cpus
from .test_scheduler import condition, job, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster
__all__ = ["two_cpus"]  # the fixture, shared


def bare(name: str, **pod_spec: Any) -> dict[str, Any]:
    """A queued Job of one pod asking for no resources at all."""
    built = job(name, "user-queue", delay="600s", tolerate_spot=False)
    spec = built["spec"]["template"]["spec"]
    spec["containers"][0].pop("resources")
    spec.update(pod_spec)
    return built


def usage(workload: dict[str, Any]) -> dict[str, str]:
    return dict(workload["status"]["admission"]["podSetAssignments"][0]["resourceUsage"])


@pytest.fixture
async def kata(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    node = client.NodeV1Api(api)
    name = f"kata-{namespace}"
    await node.create_runtime_class(
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": name},
            "handler": "kata",
            "overhead": {"podFixed": {"cpu": "250m"}},
        }
    )
    yield name
    await node.delete_runtime_class(name)


async def test_jobs_asking_nothing_are_charged_the_namespace_defaults(
    kuota_scheduler: SchedulerReplica, api: client.ApiClient, namespace: str, two_cpus: str
) -> None:
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    await core.create_namespaced_limit_range(
        namespace,
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "defaults"},
            "spec": {
                "limits": [
                    {"type": "Container", "default": {"cpu": "1"}, "defaultRequest": {"cpu": "1"}}
                ]
            },
        },
    )
    for name in ("a", "b", "c"):
        await batch.create_namespaced_job(namespace, bare(name))

    async def settled() -> dict[str, dict[str, Any]]:
        return await workloads_of(api, namespace)

    found = await eventually(
        settled,
        lambda got: (
            len(got) == 3
            and sum(reserved(w) for w in got.values()) == 2
            and any(
                (condition(w, "QuotaReserved") or {}).get("reason") == "WaitingForQuota"
                for w in got.values()
            )
        ),
        timeout=60,
        what="two Jobs admitted at one CPU each, the third waiting",
    )
    admitted = [w for w in found.values() if reserved(w)]
    assert [usage(w) for w in admitted] == [{"cpu": "1"}, {"cpu": "1"}]
    (waiting,) = [w for w in found.values() if not reserved(w)]
    assert (condition(waiting, "QuotaReserved") or {})["message"].endswith(
        f"insufficient unused quota for cpu in flavor ondemand-{namespace}, 1 more needed"
    )
    container = waiting["spec"]["podSets"][0]["template"]["spec"]["containers"][0]
    assert not container.get("resources"), "the Workload keeps the Job's template"


async def test_a_runtime_class_overhead_is_charged_on_top_of_the_requests(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    two_cpus: str,
    kata: str,
) -> None:
    batch = client.BatchV1Api(api)
    sandboxed = job("sandboxed", "user-queue", delay="600s", tolerate_spot=False)
    sandboxed["spec"]["template"]["spec"]["runtimeClassName"] = kata
    await batch.create_namespaced_job(namespace, sandboxed)
    first = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: reserved(got.get("sandboxed")),
        timeout=60,
        what="the sandboxed Job admitted",
    )
    assert usage(first["sandboxed"]) == {"cpu": "1250m"}
    await batch.create_namespaced_job(
        namespace, job("plain", "user-queue", delay="600s", tolerate_spot=False)
    )
    waiting = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: (
            (condition(got.get("plain") or {}, "QuotaReserved") or {}).get("reason")
            == "WaitingForQuota"
        ),
        timeout=60,
        what="the plain Job waiting: 1 CPU does not fit beside 1250m in 2",
    )
    assert (condition(waiting["plain"], "QuotaReserved") or {})["message"].endswith(
        f"insufficient unused quota for cpu in flavor ondemand-{namespace}, 250m more needed"
    )
