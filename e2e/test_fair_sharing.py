"""Fair sharing on a real cluster, with kuota's scheduler started with a ``fairSharing``
section (Kueue's fair-sharing specs restart their manager with one likewise).

- a ClusterQueue that borrows from its cohort shows ``status.fairSharing.weightedShare``
  above 0, and so does the Cohort that borrows from its parent; the lender shows 0;
  when the borrower's Job is gone, the shares go back to 0;
- admission fair sharing (as Kueue's sequential/baseline spec "should prioritize
  LocalQueues with lower usage", with its half-life and sampling interval of 1s): a
  ClusterQueue room for one Job at a time, three older Jobs in ``lq-a`` and two newer
  ones in ``lq-b``; each time the running Job goes, the LocalQueue that used less
  (its status shows it) gets the next turn, so the two alternate where age alone
  would run all of ``lq-a`` first;
- a scheduler that starts reads each LocalQueue's history back from its status: the
  usage a former scheduler recorded for ``lq-a`` sends ``lq-b``'s younger Job first,
  and the history goes on from the recorded value (not from 0).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client

from scheduler.api.quantity import Quantity

from .cluster.pki import ClusterPki
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_install import KUOTA_CONFIG, KuotaWebhook
from .kuota_scheduler import SchedulerReplica, start_schedulers
from .test_scheduler import GROUP, VERSION, job
from .waiting import eventually

pytestmark = pytest.mark.cluster

Start = Callable[[dict[str, Any]], SchedulerReplica]


@pytest.fixture
def scheduler_with(
    cluster: ClusterHandle, kuota: KuotaWebhook, tmp_path: Path, fleet_paused: None
) -> Iterator[Start]:
    """Start the scheduler with the local cluster's Configuration plus these sections;
    stopped after the test."""
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    started: list[SchedulerReplica] = []

    def start(sections: dict[str, Any]) -> SchedulerReplica:
        assert cluster.workdir is not None and cluster.info is not None
        config = yaml.safe_load(KUOTA_CONFIG.read_text())
        config.update(sections)
        path = tmp_path / "kuota-config.yaml"
        path.write_text(yaml.safe_dump(config))
        (replica,) = start_schedulers(
            kubectl_binary,
            cluster.kubeconfig,
            ClusterPki(cluster.workdir / "pki"),
            cluster.info.server,
            cluster.workdir,
            config=path,
        )
        started.append(replica)
        return replica

    yield start
    for replica in started:
        replica.stop()


MERGE = "application/merge-patch+json"


def cluster_queue(name: str, flavor: str, cohort: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "cohortName": cohort,
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": flavor, "resources": [{"name": "cpu", "nominalQuota": cpu}]}
                    ],
                }
            ],
        },
    }


@pytest.fixture
async def cohort_tree(api: client.ApiClient, namespace: str) -> AsyncIterator[dict[str, str]]:
    """Cohort ``root`` with child Cohort ``team``; ClusterQueue ``a`` (2 CPUs) in ``team``,
    ``b`` (4 CPUs) in ``root``; LocalQueue ``lq-a`` for ``a``.  Names carry the namespace."""
    custom = client.CustomObjectsApi(api)
    names = {key: f"{key}-{namespace}" for key in ("flavor", "root", "team", "a", "b")}
    created: list[tuple[str, str]] = []

    async def create(plural: str, body: dict[str, Any]) -> None:
        await custom.create_cluster_custom_object(GROUP, VERSION, plural, body)
        created.append((plural, body["metadata"]["name"]))

    def cohort(name: str, parent: str | None) -> dict[str, Any]:
        spec = {"parentName": parent} if parent else {}
        return {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Cohort",
            "metadata": {"name": name},
            "spec": spec,
        }

    await create(
        "resourceflavors",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ResourceFlavor",
            "metadata": {"name": names["flavor"]},
        },
    )
    await create("cohorts", cohort(names["root"], None))
    await create("cohorts", cohort(names["team"], names["root"]))
    await create("clusterqueues", cluster_queue(names["a"], names["flavor"], names["team"], "2"))
    await create("clusterqueues", cluster_queue(names["b"], names["flavor"], names["root"], "4"))
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "lq-a"},
            "spec": {"clusterQueue": names["a"]},
        },
    )
    yield names
    batch = client.BatchV1Api(api)
    for item in (await batch.list_namespaced_job(namespace)).items:
        await batch.delete_namespaced_job(
            item.metadata.name, namespace, propagation_policy="Background"
        )
    for plural, name in reversed(created):
        await custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)


def share_gauges(replica: SchedulerReplica) -> dict[tuple[str, str], float]:
    """(name, "cq" or "cohort") -> the value of Kueue's weighted-share gauges."""
    status, text = replica.endpoint("/metrics")
    found: dict[tuple[str, str], float] = {}
    if status != 200:
        return found
    for line in text.splitlines():
        for metric, kind, label in (
            ("kueue_cluster_queue_weighted_share{", "cq", "cluster_queue"),
            ("kueue_cohort_weighted_share{", "cohort", "cohort"),
        ):
            if line.startswith(metric):
                labels, _, value = line[len(metric) :].partition("} ")
                for pair in labels.split(","):
                    key, _, quoted = pair.partition("=")
                    if key == label:
                        found[(quoted.strip('"'), kind)] = float(value)
    return found


def share_of(api: client.ApiClient, plural: str, name: str) -> Callable[[], Any]:
    async def probe() -> int | None:
        obj = await client.CustomObjectsApi(api).get_cluster_custom_object(
            GROUP, VERSION, plural, name
        )
        fair = (obj.get("status") or {}).get("fairSharing")
        return None if fair is None else int(fair["weightedShare"])

    return probe


async def test_a_borrowing_queue_and_its_cohort_show_their_weighted_share(
    scheduler_with: Start, api: client.ApiClient, namespace: str, cohort_tree: dict[str, str]
) -> None:
    replica = scheduler_with(
        {"fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare"]}}
    )
    for plural, name in (("clusterqueues", "a"), ("clusterqueues", "b"), ("cohorts", "team")):
        await eventually(
            share_of(api, plural, cohort_tree[name]),
            lambda share: share == 0,
            timeout=30,
            what=f"{name}: weightedShare 0 before any Job",
        )
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("wide", "lq-a", cpu="4", delay="1h"))
    # a uses 4 of its 2 CPUs: it and its Cohort team borrow 2 of the 6 the tree can lend,
    # ceil(2 x 1000 / 6).
    assert (
        await eventually(
            share_of(api, "clusterqueues", cohort_tree["a"]),
            lambda share: share is not None and share > 0,
            timeout=60,
            what="the borrowing ClusterQueue's weightedShare above 0",
        )
        == 334
    )
    assert await share_of(api, "cohorts", cohort_tree["team"])() == 334
    assert await share_of(api, "clusterqueues", cohort_tree["b"])() == 0
    assert await share_of(api, "cohorts", cohort_tree["root"])() == 0
    # Kueue's gauges carry the share unrounded.
    a, team = cohort_tree["a"], cohort_tree["team"]
    gauges = await eventually(
        lambda: asyncio.to_thread(lambda: share_gauges(replica)),
        lambda found: (a, "cq") in found and (team, "cohort") in found,
        timeout=30,
        what="the weighted-share gauges on /metrics",
    )
    assert abs(gauges[(a, "cq")] - 2000 / 6) < 1e-6
    assert abs(gauges[(team, "cohort")] - 2000 / 6) < 1e-6

    await batch.delete_namespaced_job("wide", namespace, propagation_policy="Background")
    await eventually(
        share_of(api, "clusterqueues", cohort_tree["a"]),
        lambda share: share == 0,
        timeout=60,
        what="weightedShare back to 0 once the Job is gone",
    )


@pytest.fixture
async def shared_queue(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """ClusterQueue of 4 CPUs in ``UsageBasedAdmissionFairSharing`` mode, LocalQueues
    ``lq-a`` and ``lq-b`` of weight 1 in ``namespace``."""
    custom = client.CustomObjectsApi(api)
    flavor, cq = f"afs-{namespace}", f"afs-cq-{namespace}"
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "resourceflavors",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ResourceFlavor",
            "metadata": {"name": flavor},
        },
    )
    body = cluster_queue(cq, flavor, "", "4")
    del body["spec"]["cohortName"]
    body["spec"]["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
    await custom.create_cluster_custom_object(GROUP, VERSION, "clusterqueues", body)
    for name in ("lq-a", "lq-b"):
        await custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "localqueues",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "LocalQueue",
                "metadata": {"name": name},
                "spec": {"clusterQueue": cq, "fairSharing": {"weight": "1"}},
            },
        )
    yield cq
    batch = client.BatchV1Api(api)
    for item in (await batch.list_namespaced_job(namespace)).items:
        await batch.delete_namespaced_job(
            item.metadata.name, namespace, propagation_policy="Background"
        )
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", cq)
    await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor)


async def running_jobs(api: client.ApiClient, namespace: str) -> list[str]:
    """The Jobs of ``namespace`` not suspended and not being deleted."""
    jobs = (await client.BatchV1Api(api).list_namespaced_job(namespace)).items
    return sorted(
        j.metadata.name
        for j in jobs
        if not j.spec.suspend and j.metadata.deletion_timestamp is None
    )


async def consumed_cpu(api: client.ApiClient, namespace: str) -> dict[str, float]:
    """LocalQueue name -> the CPU its ``admissionFairSharingStatus`` says it consumed."""
    queues = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "localqueues"
    )
    consumed: dict[str, float] = {}
    for queue in queues["items"]:
        fair = ((queue.get("status") or {}).get("fairSharing") or {}).get(
            "admissionFairSharingStatus"
        )
        if fair is not None:
            cpu = fair["consumedResources"].get("cpu", "0")
            consumed[queue["metadata"]["name"]] = float(Quantity.parse(cpu).as_decimal())
    return consumed


async def test_two_local_queues_take_turns_by_usage(
    scheduler_with: Start, api: client.ApiClient, namespace: str, shared_queue: str
) -> None:
    scheduler_with(
        {"admissionFairSharing": {"usageHalfLifeTime": "1s", "usageSamplingInterval": "1s"}}
    )
    batch = client.BatchV1Api(api)
    for name in ("a-1", "a-2", "a-3"):
        await batch.create_namespaced_job(namespace, job(name, "lq-a", cpu="4", delay="1h"))
    await asyncio.sleep(1.1)  # lq-b's Jobs are younger, to the second Kueue orders by
    for name in ("b-1", "b-2"):
        await batch.create_namespaced_job(namespace, job(name, "lq-b", cpu="4", delay="1h"))

    turns: list[str] = []
    for turn in range(5):
        (running,) = await eventually(
            lambda: running_jobs(api, namespace),
            lambda names: len(names) == 1 and names[0] not in turns,  # noqa: B023
            timeout=60,
            what=f"turn {turn + 1}: the next Job running",
        )
        turns.append(running)
        if turn == 4:
            break
        mine, other = ("lq-a", "lq-b") if running.startswith("a") else ("lq-b", "lq-a")
        # Its LocalQueue's usage grows toward the 4 CPUs it holds, the other's decays; the
        # gap is wide enough that sampling the two a second apart cannot swap them.
        await eventually(
            lambda: consumed_cpu(api, namespace),
            lambda cpu, mine=mine, other=other: cpu.get(mine, 0) > 3 and cpu.get(other, 0) < 1,
            timeout=60,
            what=f"{mine} using far more than {other} while {running} runs",
        )
        await batch.delete_namespaced_job(running, namespace, propagation_policy="Foreground")
    assert [name[0] for name in turns] == ["a", "b", "a", "b", "a"], turns


async def test_a_starting_scheduler_reads_the_usage_back_from_status(
    scheduler_with: Start, api: client.ApiClient, namespace: str, shared_queue: str
) -> None:
    # What a former scheduler wrote: lq-a consumed 100 CPUs a moment ago.
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    await client.CustomObjectsApi(api).patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        "lq-a",
        {
            "status": {
                "fairSharing": {
                    "weightedShare": 0,
                    "admissionFairSharingStatus": {
                        "consumedResources": {"cpu": "100"},
                        "lastUpdate": now,
                    },
                }
            }
        },
        _content_type="application/merge-patch+json",
    )
    # The ClusterQueue holds until the starting scheduler has made both Workloads, so the
    # order is the usage's, not that of the Workloads' creation.
    custom = client.CustomObjectsApi(api)
    hold = {"spec": {"stopPolicy": "Hold"}}
    await custom.patch_cluster_custom_object(
        GROUP, VERSION, "clusterqueues", shared_queue, hold, _content_type=MERGE
    )
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("a-1", "lq-a", cpu="4", delay="1h"))
    await asyncio.sleep(1.1)  # b-1 is younger, to the second Kueue orders by
    await batch.create_namespaced_job(namespace, job("b-1", "lq-b", cpu="4", delay="1h"))
    scheduler_with(
        {"admissionFairSharing": {"usageHalfLifeTime": "1h", "usageSamplingInterval": "1s"}}
    )
    await eventually(
        lambda: custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "workloads"),
        lambda found: len(found["items"]) == 2,
        timeout=60,
        what="both Workloads made",
    )
    release = {"spec": {"stopPolicy": "None"}}
    await custom.patch_cluster_custom_object(
        GROUP, VERSION, "clusterqueues", shared_queue, release, _content_type=MERGE
    )
    assert await eventually(
        lambda: running_jobs(api, namespace),
        lambda names: len(names) == 1,
        timeout=60,
        what="one Job running",
    ) == ["b-1"]
    consumed = await eventually(
        lambda: consumed_cpu(api, namespace),
        lambda cpu: "lq-b" in cpu,
        timeout=30,
        what="both LocalQueues sampled",
    )
    assert 99 < consumed["lq-a"] <= 100, consumed
