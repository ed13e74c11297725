"""objectRetentionPolicies and labelKeysToCopy acted on, on a real cluster.

See docs/configuration.md#object-retention and docs/concepts.md#from-job-to-workload.

The scheduler here reads a Configuration of its own (the chart's, plus
``objectRetentionPolicies.workloads`` of one second each and
``integrations.labelKeysToCopy: [team]``), as Kueue's sequential suite
``objectretentionpolicies_test.go`` reconfigures Kueue:

- a finished Workload is deleted once ``afterFinished`` elapsed; its Job is kept
  (and gets no new Workload);
- the Job of a Workload kuota deactivated (its admission check ``Rejected``) is
  deleted once ``afterDeactivatedByKueue`` elapsed, and its Workload goes with it;
- a Workload deactivated by hand keeps its Job and itself;
- the schedule comes from the Workloads' condition timestamps: a Workload that
  finished under a scheduler without the policy is deleted as soon as one with
  the policy starts;
- a new Workload carries the Job's labels ``labelKeysToCopy`` lists, only those.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client

from .cluster.pki import ClusterPki
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_install import KUOTA_CONFIG, KuotaWebhook
from .kuota_scheduler import SchedulerReplica, start_schedulers
from .test_admission_checks import Setup, admission_check, cluster_queue
from .test_scheduler import GROUP, VERSION, condition, flavor, job, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster


def retention_config(path: Path) -> Path:
    """The chart's Configuration with one-second retention and a label to copy."""
    config = yaml.safe_load(KUOTA_CONFIG.read_text())
    config["integrations"]["labelKeysToCopy"] = ["team"]
    config["objectRetentionPolicies"] = {
        "workloads": {"afterFinished": "1s", "afterDeactivatedByKueue": "1s"}
    }
    path.write_text(yaml.safe_dump(config))
    return path


def start(cluster: ClusterHandle, config: Path = KUOTA_CONFIG) -> SchedulerReplica:
    assert cluster.workdir is not None and cluster.info is not None
    (replica,) = start_schedulers(
        ToolPaths.resolve(build_if_missing=False).binary("kubectl"),
        cluster.kubeconfig,
        ClusterPki(cluster.workdir / "pki"),
        cluster.info.server,
        cluster.workdir,
        config=config,
    )
    return replica


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return retention_config(tmp_path_factory.mktemp("retention") / "kuota-config.yaml")


@pytest.fixture(scope="module")
def configured(
    cluster: ClusterHandle, kuota: KuotaWebhook, config_file: Path, fleet_paused: None
) -> Iterator[SchedulerReplica]:
    """The only scheduler while the tests that use it run: the retention Configuration."""
    replica = start(cluster, config_file)
    yield replica
    replica.stop()


@pytest.fixture
async def setup(api: client.ApiClient, namespace: str) -> AsyncIterator[Setup]:
    made = Setup(api, namespace)
    await made.create("resourceflavors", flavor(made.flavor, {"instance-type": "ondemand"}))
    plain = cluster_queue(f"cq-{namespace}", made.flavor)
    del plain["spec"]["admissionChecksStrategy"]
    await made.create("clusterqueues", plain)
    await made.custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "localqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue"},
            "spec": {"clusterQueue": f"cq-{namespace}"},
        },
    )
    yield made
    await made.cleanup()


async def job_exists(api: client.ApiClient, namespace: str, name: str) -> bool:
    try:
        await client.BatchV1Api(api).read_namespaced_job(name, namespace)
    except client.ApiException as missing:
        if missing.status == 404:
            return False
        raise
    return True


def quick(name: str, **labels: str) -> dict[str, Any]:
    built = job(name, "user-queue", delay="1s", tolerate_spot=False)
    built["metadata"]["labels"].update(labels)
    return built


async def finished(api: client.ApiClient, namespace: str, name: str) -> dict[str, Any]:
    found = await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: (condition(got.get(name) or {}, "Finished") or {}).get("status") == "True",
        timeout=90,
        what=f"{name}'s Workload finished",
    )
    return found[name]


async def test_a_scheduler_started_with_the_policy_deletes_what_finished_before(
    cluster: ClusterHandle,
    kuota: KuotaWebhook,
    api: client.ApiClient,
    namespace: str,
    setup: Setup,
    config_file: Path,
    fleet_paused: None,
) -> None:
    without = start(cluster)
    try:
        await client.BatchV1Api(api).create_namespaced_job(namespace, quick("early"))
        await finished(api, namespace, "early")
        await asyncio.sleep(3)  # a few turns of a scheduler without the policy
        assert "early" in await workloads_of(api, namespace), "no policy: kept"
    finally:
        without.stop()
    with_policy = start(cluster, config_file)
    try:
        await eventually(
            lambda: workloads_of(api, namespace),
            lambda got: "early" not in got,
            timeout=60,
            what="the Workload that finished long ago deleted by the new scheduler",
        )
        assert await job_exists(api, namespace, "early")
    finally:
        with_policy.stop()


async def test_a_finished_workload_is_deleted_and_its_job_kept(
    configured: SchedulerReplica, api: client.ApiClient, namespace: str, setup: Setup
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, quick("done"))
    # Its Workload lives about a second once finished: seen made, then seen gone.
    workload = (
        await eventually(
            lambda: workloads_of(api, namespace),
            lambda got: "done" in got,
            timeout=60,
            what="the Job's Workload",
        )
    )["done"]
    await eventually(
        lambda: batch.read_namespaced_job("done", namespace),
        lambda read: (read.status.succeeded or 0) == 1,
        timeout=90,
        what="the Job complete",
    )
    await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: "done" not in got,
        timeout=60,
        what="the finished Workload deleted",
    )
    await asyncio.sleep(3)  # a few scheduler turns: the finished Job gets no new Workload
    assert "done" not in await workloads_of(api, namespace)
    assert await job_exists(api, namespace, "done")
    events = await client.CoreV1Api(api).list_namespaced_event(
        namespace, field_selector=f"involvedObject.name={workload['metadata']['name']}"
    )
    assert "Deleted finished workload due to elapsed retention" in {
        event.message for event in events.items if event.reason == "Deleted"
    }


async def test_the_job_of_a_workload_its_check_rejected_is_deleted_with_it(
    configured: SchedulerReplica, api: client.ApiClient, namespace: str, setup: Setup
) -> None:
    check, cq = f"ext-{namespace}", f"checked-{namespace}"
    await setup.create("admissionchecks", admission_check(check, "example.com/test-controller"))
    await setup.activate(check)
    await setup.queue(cq, "checked", check)
    rejected = job("rejected", "checked", delay="600s", tolerate_spot=False)
    await client.BatchV1Api(api).create_namespaced_job(namespace, rejected)
    workload = await eventually(
        lambda: setup.workload("rejected"),
        lambda w: (
            bool((w.get("status") or {}).get("admissionChecks"))
            and (condition(w, "QuotaReserved") or {}).get("status") == "True"
        ),
        timeout=60,
        what="quota reserved, the check Pending",
    )
    await setup.set_check(workload, check, state="Rejected", message="never fits")
    await eventually(
        lambda: job_exists(api, namespace, "rejected"),
        lambda exists: not exists,
        timeout=60,
        what="the Job of the deactivated Workload deleted",
    )
    await eventually(
        lambda: workloads_of(api, namespace),
        lambda got: "rejected" not in got,
        timeout=60,
        what="its Workload deleted with it (owner reference)",
    )


async def test_a_workload_deactivated_by_hand_keeps_its_job_and_itself(
    configured: SchedulerReplica, api: client.ApiClient, namespace: str, setup: Setup
) -> None:
    await client.BatchV1Api(api).create_namespaced_job(
        namespace, job("manual", "user-queue", delay="600s", tolerate_spot=False)
    )
    workload = await eventually(
        lambda: setup.workload("manual"),
        lambda w: (condition(w, "QuotaReserved") or {}).get("status") == "True",
        timeout=60,
        what="the Job admitted",
    )
    await setup.custom.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "workloads",
        workload["metadata"]["name"],
        {"spec": {"active": False}},
        _content_type="application/merge-patch+json",
    )
    stopped = await eventually(
        lambda: setup.workload("manual"),
        lambda w: (
            (condition(w, "Evicted") or {}).get("reason") == "Deactivated"
            and (condition(w, "QuotaReserved") or {}).get("status") == "False"
        ),
        timeout=60,
        what="the Workload evicted (Deactivated) and its quota released",
    )
    assert stopped["spec"]["active"] is False
    await asyncio.sleep(4)  # well past the one-second retention
    assert await job_exists(api, namespace, "manual")
    assert "manual" in await workloads_of(api, namespace)


async def test_the_labels_listed_are_copied_to_a_new_workload(
    configured: SchedulerReplica, api: client.ApiClient, namespace: str, setup: Setup
) -> None:
    labelled = job("labelled", "user-queue", delay="600s", tolerate_spot=False)
    labelled["metadata"]["labels"].update({"team": "ml", "cost-center": "42"})
    await client.BatchV1Api(api).create_namespaced_job(namespace, labelled)
    workload = await eventually(
        lambda: setup.workload("labelled"),
        lambda w: bool(w),
        timeout=60,
        what="the Job's Workload",
    )
    labels = workload["metadata"]["labels"]
    assert labels["team"] == "ml"
    assert "cost-center" not in labels
    assert "kueue.x-k8s.io/queue-name" not in labels
