"""kuota on the local cluster (webhook and scheduler as local processes): the
seed's on-demand/spot walk-through for real.  Jobs are created as users write
them (no ``suspend``); the webhook suspends them, the scheduler admits them.
Jobs fill the on-demand quota first, later ones go to spot with the spot
nodeSelector, their pods land on the spot kwok nodes, they complete, and
the Workloads are marked Finished."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client

from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"


def flavor(
    name: str, labels: dict[str, str], taints: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeLabels": labels}
    if taints:
        spec["nodeTaints"] = taints
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": spec,
    }


def job(
    name: str, queue: str, *, cpu: str = "1", delay: str = "4s", tolerate_spot: bool = True
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
        ],
    }
    if tolerate_spot:
        spec["tolerations"] = [
            {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": delay}},
                "spec": spec,
            },
        },
    }


@pytest.fixture
async def research_pool(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    custom = client.CustomObjectsApi(api)
    suffix = namespace
    names = {
        "ondemand": f"ondemand-{suffix}",
        "spot": f"spot-{suffix}",
        "cq": f"research-pool-{suffix}",
    }
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(names["ondemand"], {"instance-type": "ondemand"})
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "resourceflavors",
        flavor(
            names["spot"],
            {"instance-type": "spot"},
            [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
        ),
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": names["cq"]},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": names["ondemand"],
                                "resources": [{"name": "cpu", "nominalQuota": "2"}],
                            },
                            {
                                "name": names["spot"],
                                "resources": [{"name": "cpu", "nominalQuota": "2"}],
                            },
                        ],
                    }
                ],
            },
        },
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": names["cq"]},
        },
    )
    yield names["cq"]
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", names["cq"])
    for key in ("ondemand", "spot"):
        await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", names[key])


async def workloads_of(api: client.ApiClient, namespace: str) -> dict[str, dict[str, Any]]:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "workloads"
    )
    return {item["metadata"]["ownerReferences"][0]["name"]: item for item in listed["items"]}


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next(
        (c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), None
    )


async def test_on_demand_first_then_spot_then_completion(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    research_pool: str,
) -> None:
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    for index in range(5):
        await batch.create_namespaced_job(namespace, job(f"job-{index}", "user-queue", delay="6s"))

    async def admitted() -> dict[str, dict[str, Any]]:
        return {
            name: wl
            for name, wl in (await workloads_of(api, namespace)).items()
            if (condition(wl, "QuotaReserved") or {}).get("status") == "True"
        }

    first = await eventually(admitted, lambda got: len(got) >= 4, timeout=60, what="4 admissions")
    flavors = sorted(
        wl["status"]["admission"]["podSetAssignments"][0]["flavors"]["cpu"] for wl in first.values()
    )
    assert flavors == sorted([f"ondemand-{namespace}"] * 2 + [f"spot-{namespace}"] * 2)
    (waiting_job,) = {f"job-{i}" for i in range(5)} - set(first)

    async def explained() -> dict[str, Any] | None:
        return condition((await workloads_of(api, namespace))[waiting_job], "QuotaReserved")

    reserved = await eventually(
        explained,
        lambda c: c is not None and c["status"] == "False",
        timeout=30,
        what="the fifth Workload's pending explanation",
    )
    assert reserved["reason"] == "WaitingForQuota"
    assert reserved["message"] == (
        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
        f"ondemand-{namespace}, 1 more needed, insufficient unused quota for cpu in flavor "
        f"spot-{namespace}, 1 more needed"
    )

    custom = client.CustomObjectsApi(api)

    async def queue_status() -> dict[str, Any]:
        return (
            await custom.get_cluster_custom_object(GROUP, VERSION, "clusterqueues", research_pool)
        ).get("status") or {}

    status = await eventually(
        queue_status,
        lambda s: s.get("admittedWorkloads") == 4 and s.get("pendingWorkloads") == 1,
        timeout=30,
        what="ClusterQueue status with 4 admitted and 1 pending",
    )
    active = next(c for c in status["conditions"] if c["type"] == "Active")
    assert (active["status"], active["message"]) == ("True", "Can admit new workloads")
    assert {f["name"]: f["resources"][0]["total"] for f in status["flavorsReservation"]} == {
        f"ondemand-{namespace}": "2",
        f"spot-{namespace}": "2",
    }

    async def local_status() -> dict[str, Any]:
        local = await custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, "localqueues", "user-queue"
        )
        return local.get("status") or {}

    await eventually(
        local_status,
        lambda s: s.get("admittedWorkloads") == 4 and s.get("pendingWorkloads") == 1,
        timeout=30,
        what="LocalQueue status with 4 admitted and 1 pending",
    )

    for name, workload in first.items():
        stored = await batch.read_namespaced_job(name, namespace)
        expected = workload["status"]["admission"]["podSetAssignments"][0]["flavors"]["cpu"].split(
            "-"
        )[0]
        assert stored.spec.suspend is False
        assert stored.spec.template.spec.node_selector == {"instance-type": expected}

    async def pods() -> list[client.V1Pod]:
        return list((await core.list_namespaced_pod(namespace)).items)

    placed = await eventually(
        pods,
        lambda items: len(items) >= 4 and all(p.spec.node_name for p in items),
        timeout=60,
        what="4 pods bound",
    )
    for pod in placed:
        job_name = pod.metadata.labels["batch.kubernetes.io/job-name"]
        wanted = first[job_name]["status"]["admission"]["podSetAssignments"][0]["flavors"][
            "cpu"
        ].split("-")[0]
        assert pod.spec.node_name.startswith(f"kwok-{wanted}-"), (job_name, pod.spec.node_name)

    async def finished() -> dict[str, dict[str, Any]]:
        return {
            name: wl
            for name, wl in (await workloads_of(api, namespace)).items()
            if (condition(wl, "Finished") or {}).get("status") == "True"
        }

    done = await eventually(
        finished,
        lambda got: len(got) == 5,
        timeout=120,
        what="all 5 Workloads Finished (the fifth admitted once quota was released)",
    )
    assert {condition(wl, "Finished")["reason"] for wl in done.values()} == {"Succeeded"}
    status, text = kuota_scheduler.endpoint("/metrics")
    assert status == 200 and "kueue_admitted_workloads_total" in text


async def test_a_high_priority_job_preempts_a_low_priority_one(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
) -> None:
    custom, batch, core = (
        client.CustomObjectsApi(api),
        client.BatchV1Api(api),
        client.CoreV1Api(api),
    )
    flavor_name, cq_name = f"ondemand-{namespace}", f"priority-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(flavor_name, {"instance-type": "ondemand"})
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": cq_name},
            "spec": {
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": flavor_name,
                                "resources": [{"name": "cpu", "nominalQuota": "1"}],
                            }
                        ],
                    }
                ],
            },
        },
    )
    for name, value in (("low", 10), ("high", 1000)):
        await custom.create_cluster_custom_object(
            GROUP,
            VERSION,
            "workloadpriorityclasses",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": f"{name}-{namespace}"},
                "value": value,
            },
        )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": cq_name},
        },
    )
    try:
        low = job("low", "user-queue", delay="600s", tolerate_spot=False)
        low["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = f"low-{namespace}"
        await batch.create_namespaced_job(namespace, low)

        async def low_pods() -> list[client.V1Pod]:
            pods = await core.list_namespaced_pod(
                namespace, label_selector="batch.kubernetes.io/job-name=low"
            )
            return list(pods.items)

        await eventually(
            low_pods,
            lambda pods: any(p.status.phase == "Running" for p in pods),
            timeout=60,
            what="the low-priority Job running",
        )
        high = job("high", "user-queue", delay="3s", tolerate_spot=False)
        high["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = f"high-{namespace}"
        await batch.create_namespaced_job(namespace, high)

        async def low_workload() -> dict[str, Any]:
            return (await workloads_of(api, namespace))["low"]

        evicted = await eventually(
            low_workload,
            lambda wl: (condition(wl, "Evicted") or {}).get("status") == "True",
            timeout=60,
            what="the low-priority Workload evicted",
        )
        high_uid = (await workloads_of(api, namespace))["high"]["metadata"]["uid"]
        message = condition(evicted, "Evicted")["message"]
        assert high_uid in message and "ClusterQueue" in message, message
        assert (condition(evicted, "Preempted") or {}).get("reason") == "InClusterQueue"

        async def low_job() -> client.V1Job:
            return await batch.read_namespaced_job("low", namespace)

        await eventually(
            low_job,
            lambda j: j.spec.suspend is True,
            timeout=30,
            what="the low Job suspended again",
        )
        await eventually(
            low_pods, lambda pods: not pods, timeout=60, what="the low Job's pods gone"
        )
        stopped = await low_job()
        assert stopped.spec.template.spec.node_selector is None, (
            "the pod template is back to what the user wrote"
        )

        async def high_workload() -> dict[str, Any]:
            return (await workloads_of(api, namespace))["high"]

        await eventually(
            high_workload,
            lambda wl: (condition(wl, "Finished") or {}).get("status") == "True",
            timeout=90,
            what="the high-priority Job admitted and finished",
        )
        readmitted = await eventually(
            low_workload,
            lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "True",
            timeout=60,
            what="the low-priority Job admitted again after the high one",
        )
        assert (condition(readmitted, "Evicted") or {}).get("status") == "False"
    finally:
        await batch.delete_namespaced_job("low", namespace, propagation_policy="Background")
        await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", cq_name)
        await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor_name)
        for name in ("low", "high"):
            await custom.delete_cluster_custom_object(
                GROUP, VERSION, "workloadpriorityclasses", f"{name}-{namespace}"
            )


async def test_two_team_cohort_borrowing_then_team_b_reclaims_its_nominal_quota(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
) -> None:
    """The seed's team-a (9 CPUs) and team-b (12 CPUs) in one cohort: team-a borrows
    what team-b does not use; when team-b submits, it reclaims its nominal quota
    (reclaimWithinCohort: Any) from team-a's borrowing workloads."""
    custom, batch = client.CustomObjectsApi(api), client.BatchV1Api(api)
    suffix = namespace
    flavor_name, cohort = f"default-{suffix}", f"team-ab-{suffix}"
    await custom.create_cluster_custom_object(
        GROUP, VERSION, "resourceflavors", flavor(flavor_name, {"instance-type": "ondemand"})
    )
    for team, cpu in (("a", "9"), ("b", "12")):
        await custom.create_cluster_custom_object(
            GROUP,
            VERSION,
            "clusterqueues",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "ClusterQueue",
                "metadata": {"name": f"team-{team}-{suffix}"},
                "spec": {
                    "namespaceSelector": {},
                    "cohortName": cohort,
                    "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "Never"},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [
                                {
                                    "name": flavor_name,
                                    "resources": [{"name": "cpu", "nominalQuota": cpu}],
                                }
                            ],
                        }
                    ],
                },
            },
        )
        await custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "localqueues",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "LocalQueue",
                "metadata": {"name": f"team-{team}"},
                "spec": {"clusterQueue": f"team-{team}-{suffix}"},
            },
        )
    try:
        # team-a: 5 Jobs of 3 CPUs = 15 > 9: it borrows 6 of team-b's idle 12.
        for index in range(5):
            await batch.create_namespaced_job(
                namespace, job(f"a-{index}", "team-a", cpu="3", delay="600s", tolerate_spot=False)
            )

        async def states() -> dict[str, dict[str, Any]]:
            return await workloads_of(api, namespace)

        def reserved(workloads: dict[str, dict[str, Any]], prefix: str) -> list[str]:
            return sorted(
                name
                for name, wl in workloads.items()
                if name.startswith(prefix)
                and (condition(wl, "QuotaReserved") or {}).get("status") == "True"
            )

        await eventually(
            states,
            lambda wls: len(reserved(wls, "a-")) == 5,
            timeout=60,
            what="team-a's 5 Jobs admitted, 6 CPUs borrowed from team-b",
        )

        async def team_a_status() -> dict[str, Any]:
            cq = await custom.get_cluster_custom_object(
                GROUP, VERSION, "clusterqueues", f"team-a-{suffix}"
            )
            return cq.get("status") or {}

        def team_a_cpu(status: dict[str, Any]) -> tuple[str, str] | None:
            flavors = status.get("flavorsReservation") or []
            if not flavors:
                return None
            cpu = flavors[0]["resources"][0]
            return cpu["total"], cpu["borrowed"]

        # Queue status is refreshed at most once a second: wait for it to catch up.
        await eventually(
            team_a_status,
            lambda s: team_a_cpu(s) == ("15", "6"),
            timeout=30,
            what="team-a status: 15 cpu reserved, 6 of them borrowed",
        )

        # team-b now needs 12 of its own: 4 Jobs of 3 CPUs; only 6 are free, so 2 of team-a's
        # borrowing Jobs are preempted (InCohortReclamation) and team-b gets its nominal quota.
        for index in range(4):
            await batch.create_namespaced_job(
                namespace, job(f"b-{index}", "team-b", cpu="3", delay="600s", tolerate_spot=False)
            )
        final = await eventually(
            states,
            lambda wls: len(reserved(wls, "b-")) == 4,
            timeout=90,
            what="team-b's 4 Jobs admitted within its nominal 12 CPUs",
        )
        assert len(reserved(final, "a-")) == 3, "team-a keeps its nominal 9 CPUs"
        preempted = [
            wl
            for name, wl in final.items()
            if name.startswith("a-")
            and (condition(wl, "Preempted") or {}).get("reason") == "InCohortReclamation"
        ]
        assert len(preempted) == 2
    finally:
        await batch.delete_collection_namespaced_job(namespace, propagation_policy="Background")
        for team in ("a", "b"):
            await custom.delete_cluster_custom_object(
                GROUP, VERSION, "clusterqueues", f"team-{team}-{suffix}"
            )
        await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor_name)


async def test_deactivating_a_running_workload_stops_its_job_and_releases_quota(
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    research_pool: str,
) -> None:
    custom, batch, core = (
        client.CustomObjectsApi(api),
        client.BatchV1Api(api),
        client.CoreV1Api(api),
    )
    await batch.create_namespaced_job(namespace, job("long", "user-queue", delay="600s"))

    async def workload() -> dict[str, Any]:
        return (await workloads_of(api, namespace)).get("long") or {}

    running = await eventually(
        workload,
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "True",
        timeout=60,
        what="the Job admitted",
    )
    await custom.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "workloads",
        running["metadata"]["name"],
        {"spec": {"active": False}},
        _content_type="application/merge-patch+json",
    )
    stopped = await eventually(
        workload,
        lambda wl: (condition(wl, "QuotaReserved") or {}).get("status") == "False",
        timeout=60,
        what="the deactivated Workload's quota released",
    )
    assert (condition(stopped, "Evicted") or {}).get("reason") == "Deactivated"
    assert "admission" not in (stopped.get("status") or {})
    assert (await batch.read_namespaced_job("long", namespace)).spec.suspend is True
    pods = await core.list_namespaced_pod(
        namespace, label_selector="batch.kubernetes.io/job-name=long"
    )
    assert not pods.items, "quota is released only once the Job's pods are gone"
