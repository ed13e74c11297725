"""waitForPodsReady and the maximum execution time on a real cluster.

The facts Kueue v0.19.2's e2e specs assert (sequential/baseline
waitforpodsready_test.go; the maximum execution time of the workload
controller), against kuota's scheduler started with the same
``waitForPodsReady`` settings:

- pods that never get Ready: the Workload is evicted (``PodsReadyTimeout``,
  ``PodsReady=False``/``WaitForStart``, ``schedulingStats`` counting it with
  that cause), its Job suspended, ``requeueState.count`` 1, and after the next
  timeout, past ``backoffLimitCount``, it is deactivated;
- a pod that fails after the Job was ready, replaced slower than
  ``recoveryTimeout``: evicted with cause ``WaitForRecovery``, requeued, ready
  again (``Started``), ``Evicted=False``, ``Requeued=True``; the time-to-ready
  series count both starts, the ready-to-evicted one nothing (the pods were
  not ready when evicted);
- the same with a long ``recoveryTimeout``: ``PodsReady=True``/``Recovered``,
  no eviction;
- ``blockAdmission``: a second Job waits (``WaitingForPodsReady``) while the
  first one's pods are not ready;
- a Job labelled ``kueue.x-k8s.io/max-exec-time-seconds``: its Workload is
  deactivated (``DeactivatedDueToMaximumExecutionTimeExceeded``, Kueue's
  message, Warning event) once it has run that long, counting the time of an
  earlier admission (``accumulatedPastExecutionTimeSeconds``).

kwok plays the pods: the annotation ``pod-ready.stage.kwok.x-k8s.io/delay``
keeps a pod not Ready that long (``e2e/cluster/kwok_config.py``); a pod's
failure is its status patched to ``Failed``, as the kubelet reports a crash
(the Job replaces it).
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
from prometheus_client.parser import text_string_to_metric_families

from .cluster.kwok_config import DELAY_ANNOTATION, READY_DELAY_ANNOTATION
from .cluster.pki import ClusterPki
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_install import KUOTA_CONFIG, KuotaWebhook
from .kuota_scheduler import SchedulerReplica, start_schedulers
from .test_scheduler import GROUP, VERSION, condition, workloads_of
from .waiting import eventually

pytestmark = pytest.mark.cluster

MAX_EXEC_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
Start = Callable[[dict[str, Any]], SchedulerReplica]


@pytest.fixture
def scheduler_with(
    cluster: ClusterHandle, kuota: KuotaWebhook, tmp_path: Path, fleet_paused: None
) -> Iterator[Start]:
    """Start the scheduler with the local cluster's Configuration and this ``waitForPodsReady``
    (Kueue's specs restart their manager with theirs); stopped after the test."""
    assert cluster.workdir is not None and cluster.info is not None
    kubectl_binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    started: list[SchedulerReplica] = []

    def start(wait_for_pods_ready: dict[str, Any]) -> SchedulerReplica:
        assert cluster.workdir is not None and cluster.info is not None
        config = yaml.safe_load(KUOTA_CONFIG.read_text())
        config["waitForPodsReady"] = wait_for_pods_ready
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


@pytest.fixture
async def queue(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """Flavor, ClusterQueue with 10 CPUs and the LocalQueue ``lq`` (Kueue's specs' setup)."""
    custom = client.CustomObjectsApi(api)
    flavor, cq = f"default-{namespace}", f"cq-{namespace}"
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
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "ClusterQueue",
            "metadata": {"name": cq},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": flavor, "resources": [{"name": "cpu", "nominalQuota": "10"}]}
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
            "metadata": {"name": "lq"},
            "spec": {"clusterQueue": cq},
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


def job(
    name: str,
    *,
    ready_after: str | None = None,
    indexed: bool = False,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Job of one pod of 2 CPUs in ``lq`` that runs for an hour; its pod is Ready only
    ``ready_after`` after it starts (kwok)."""
    annotations = {DELAY_ANNOTATION: "1h"}
    if ready_after is not None:
        annotations[READY_DELAY_ANNOTATION] = ready_after
    spec: dict[str, Any] = {
        "parallelism": 1,
        "completions": 1,
        "template": {
            "metadata": {"annotations": annotations},
            "spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 1,
                "containers": [
                    {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "2"}}}
                ],
            },
        },
    }
    if indexed:
        spec["completionMode"] = "Indexed"
        spec["backoffLimitPerIndex"] = 2
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "labels": {"kueue.x-k8s.io/queue-name": "lq", **(labels or {})},
        },
        "spec": spec,
    }


def has(obj: dict[str, Any], kind: str, status: str, reason: str | None = None) -> bool:
    found = condition(obj, kind) or {}
    return found.get("status") == status and (reason is None or found.get("reason") == reason)


def workload_probe(api: client.ApiClient, namespace: str, name: str) -> Callable[[], Any]:
    async def probe() -> dict[str, Any]:
        return (await workloads_of(api, namespace)).get(name) or {}

    return probe


async def kill_running_pod(api: client.ApiClient, namespace: str, job_name: str) -> None:
    """The Job's one running pod fails, as the kubelet reports a crashed container: phase
    ``Failed``, not Ready (kwok plays no crash; an Indexed Job with a backoff limit per index
    replaces only a terminal pod, so deleting it would leave it terminating)."""
    core = client.CoreV1Api(api)

    async def running() -> list[Any]:
        pods = await core.list_namespaced_pod(
            namespace, label_selector=f"batch.kubernetes.io/job-name={job_name}"
        )
        return [p for p in pods.items if p.status.phase == "Running"]

    (pod,) = await eventually(running, lambda pods: len(pods) == 1, timeout=60, what="a pod")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    await core.patch_namespaced_pod_status(
        pod.metadata.name,
        namespace,
        {
            "status": {
                "phase": "Failed",
                "conditions": [
                    {"type": "Ready", "status": "False", "lastTransitionTime": now},
                    {"type": "ContainersReady", "status": "False", "lastTransitionTime": now},
                ],
                "containerStatuses": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "imageID": "",
                        "ready": False,
                        "restartCount": 0,
                        "state": {
                            "terminated": {"exitCode": 1, "reason": "Error", "finishedAt": now}
                        },
                    }
                ],
            }
        },
    )


async def test_pods_not_ready_in_time_evict_requeue_then_deactivate(
    scheduler_with: Start, api: client.ApiClient, namespace: str, queue: str
) -> None:
    replica = scheduler_with(
        {
            "blockAdmission": True,
            "timeout": "1s",
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": 10,
                "backoffLimitCount": 1,
            },
        }
    )
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("job-timeout", ready_after="1h"))
    workload = workload_probe(api, namespace, "job-timeout")

    evicted = await eventually(
        workload,
        lambda wl: (
            has(wl, "PodsReady", "False", "WaitForStart")
            and has(wl, "Evicted", "True", "PodsReadyTimeout")
        ),
        timeout=60,
        what="the Workload evicted for its pods' readiness",
    )
    name = evicted["metadata"]["name"]
    assert (condition(evicted, "Evicted") or {}).get("message") == (
        f"Exceeded the PodsReady timeout {namespace}/{name}"
    )
    assert evicted["status"]["schedulingStats"]["evictions"] == [
        {"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 1}
    ]
    status, text = replica.endpoint("/metrics")
    assert status == 200
    assert any(
        line.startswith("kueue_evicted_workloads_total{")
        and f'cluster_queue="{queue}"' in line
        and 'reason="PodsReadyTimeout"' in line
        and 'underlying_cause="WaitForStart"' in line
        for line in text.splitlines()
    ), "the eviction metric with Kueue's labels"

    async def suspended() -> bool:
        return bool((await batch.read_namespaced_job("job-timeout", namespace)).spec.suspend)

    await eventually(suspended, bool, timeout=60, what="the Job suspended")
    await eventually(
        workload,
        lambda wl: (wl.get("status", {}).get("requeueState") or {}).get("count") == 1,
        timeout=60,
        what="requeueState.count 1",
    )
    deactivated = await eventually(
        workload,
        lambda wl: wl.get("spec", {}).get("active") is False,
        timeout=120,
        what="the Workload deactivated after its second timeout",
    )
    assert deactivated["status"]["schedulingStats"]["evictions"][0]["count"] == 1
    stopped = await eventually(
        workload,
        lambda wl: has(wl, "Evicted", "True", "DeactivatedDueToRequeuingLimitExceeded"),
        timeout=60,
        what="the deactivation eviction",
    )
    assert (condition(stopped, "Evicted") or {}).get("message") == (
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
    )


async def test_a_pod_failure_past_the_recovery_timeout_evicts_and_requeues(
    scheduler_with: Start, api: client.ApiClient, namespace: str, queue: str
) -> None:
    replica = scheduler_with(
        {
            "blockAdmission": True,
            "timeout": "5m",
            "recoveryTimeout": "1s",
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": 1,
                "backoffLimitCount": 2,
            },
        }
    )
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(
        namespace, job("job-recovery-timeout", ready_after="4s", indexed=True)
    )
    workload = workload_probe(api, namespace, "job-recovery-timeout")
    await eventually(
        workload, lambda wl: has(wl, "PodsReady", "True"), timeout=60, what="PodsReady"
    )
    await kill_running_pod(api, namespace, "job-recovery-timeout")

    def requeued(wl: dict[str, Any]) -> bool:
        stats = (wl.get("status", {}).get("schedulingStats") or {}).get("evictions") or []
        return (
            (wl["status"].get("requeueState") or {}).get("count", 0) >= 1
            and has(wl, "PodsReady", "True", "Started")
            and has(wl, "Evicted", "False")
            and has(wl, "Requeued", "True")
            and len(stats) == 1
        )

    core = client.CoreV1Api(api)

    async def seen() -> dict[str, Any]:
        """The Workload, and (for a failure's message) the Job's status and its pods."""
        found = await workload()
        job_status = (await batch.read_namespaced_job("job-recovery-timeout", namespace)).status
        pods = await core.list_namespaced_pod(namespace)
        found["_seen"] = {
            "job": job_status.to_dict() if job_status else None,
            "pods": [
                (p.metadata.name, p.status.phase, p.metadata.deletion_timestamp, p.spec.node_name)
                for p in pods.items
            ],
        }
        return found

    again = await eventually(
        seen, requeued, timeout=120, what="evicted for recovery, requeued, ready again"
    )
    (entry,) = again["status"]["schedulingStats"]["evictions"]
    assert (entry["reason"], entry["underlyingCause"]) == ("PodsReadyTimeout", "WaitForRecovery")
    assert entry["count"] >= 1

    async def ready_counts() -> tuple[float, float, float]:
        status, text = replica.endpoint("/metrics")
        assert status == 200, text
        return (
            series_sum(text, "kueue_ready_wait_time_seconds_count", queue),
            series_sum(text, "kueue_admitted_until_ready_wait_time_seconds_count", queue),
            series_sum(text, "kueue_pods_ready_to_evicted_time_seconds_count", queue),
        )

    await eventually(
        ready_counts,
        lambda counts: counts == (2, 2, 0),
        timeout=30,
        what="two starts counted, and no ready-to-evicted time: the pods were not ready when "
        "evicted",
    )


def series_sum(text: str, name: str, cluster_queue: str) -> float:
    """The sum of a series' samples of one ClusterQueue in a /metrics text."""
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and sample.labels.get("cluster_queue") == cluster_queue
    )


async def test_a_pod_failure_recovered_in_time_keeps_the_workload_running(
    scheduler_with: Start, api: client.ApiClient, namespace: str, queue: str
) -> None:
    scheduler_with(
        {
            "blockAdmission": True,
            "timeout": "5m",
            "recoveryTimeout": "5m",
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": 1,
                "backoffLimitCount": 1,
            },
        }
    )
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(
        namespace, job("job-recovery-timeout", ready_after="3s", indexed=True)
    )
    workload = workload_probe(api, namespace, "job-recovery-timeout")
    await eventually(
        workload,
        lambda wl: has(wl, "PodsReady", "True", "Started"),
        timeout=60,
        what="PodsReady",
    )
    await kill_running_pod(api, namespace, "job-recovery-timeout")
    await eventually(
        workload,
        lambda wl: has(wl, "PodsReady", "False", "WaitForRecovery"),
        timeout=30,
        what="waiting for recovery",
    )
    recovered = await eventually(
        workload,
        lambda wl: has(wl, "PodsReady", "True", "Recovered"),
        timeout=120,
        what="recovered before the recovery timeout",
    )
    assert "schedulingStats" not in recovered["status"]
    assert "requeueState" not in recovered["status"]
    assert not has(recovered, "Evicted", "True")


async def test_block_admission_holds_the_next_job_until_pods_are_ready(
    scheduler_with: Start, api: client.ApiClient, namespace: str, queue: str
) -> None:
    scheduler_with({"blockAdmission": True, "timeout": "5m"})
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("first", ready_after="1h"))
    await eventually(
        workload_probe(api, namespace, "first"),
        lambda wl: has(wl, "Admitted", "True"),
        timeout=60,
        what="the first Job admitted",
    )
    await batch.create_namespaced_job(namespace, job("second"))
    second = workload_probe(api, namespace, "second")
    waiting = await eventually(
        second,
        lambda wl: has(wl, "QuotaReserved", "False", "WaitingForPodsReady"),
        timeout=60,
        what="the second Job held back",
    )
    assert (condition(waiting, "QuotaReserved") or {}).get("message") == (
        "waiting for all admitted workloads to be in PodsReady condition"
    )
    await batch.delete_namespaced_job("first", namespace, propagation_policy="Background")
    await eventually(
        second, lambda wl: has(wl, "Admitted", "True"), timeout=60, what="admitted after"
    )


async def test_a_job_past_its_maximum_execution_time_is_deactivated(
    scheduler_with: Start, api: client.ApiClient, namespace: str, queue: str
) -> None:
    scheduler_with({"timeout": "5m"})
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("limited", labels={MAX_EXEC_LABEL: "5"}))
    workload = workload_probe(api, namespace, "limited")
    admitted = await eventually(
        workload, lambda wl: has(wl, "Admitted", "True"), timeout=60, what="admitted"
    )
    assert admitted["spec"]["maximumExecutionTimeSeconds"] == 5
    stopped = await eventually(
        workload,
        lambda wl: (
            wl["spec"].get("active") is False
            and has(wl, "Evicted", "True", "DeactivatedDueToMaximumExecutionTimeExceeded")
        ),
        timeout=60,
        what="deactivated after 5 s",
    )
    assert (condition(stopped, "Evicted") or {}).get("message") == (
        "The workload is deactivated due to exceeding the maximum execution time"
    )

    async def suspended() -> bool:
        return bool((await batch.read_namespaced_job("limited", namespace)).spec.suspend)

    await eventually(suspended, bool, timeout=60, what="the Job suspended")
    core = client.CoreV1Api(api)

    async def warnings() -> list[tuple[str, str]]:
        events = await core.list_namespaced_event(namespace)
        return [(e.reason, e.message) for e in events.items if e.type == "Warning"]

    await eventually(
        warnings,
        lambda found: (
            ("MaximumExecutionTimeExceeded", "The maximum execution time (5s) exceeded") in found
        ),
        timeout=30,
        what="Kueue's Warning event",
    )


async def test_the_time_of_an_earlier_admission_counts_toward_the_maximum(
    scheduler_with: Start, api: client.ApiClient, namespace: str, queue: str
) -> None:
    scheduler_with({"timeout": "5m"})
    custom, batch = client.CustomObjectsApi(api), client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("twice", labels={MAX_EXEC_LABEL: "30"}))
    workload = workload_probe(api, namespace, "twice")
    await eventually(workload, lambda wl: has(wl, "Admitted", "True"), timeout=60, what="admitted")
    await asyncio.sleep(2)  # the time that must pass: execution time is counted in whole seconds

    async def stop_policy(policy: str) -> None:
        await custom.patch_cluster_custom_object(
            GROUP,
            VERSION,
            "clusterqueues",
            queue,
            {"spec": {"stopPolicy": policy}},
            _content_type="application/merge-patch+json",
        )

    await stop_policy("HoldAndDrain")
    released = await eventually(
        workload,
        lambda wl: has(wl, "QuotaReserved", "False") and has(wl, "Admitted", "False"),
        timeout=60,
        what="evicted and released",
    )
    assert released["spec"].get("active", True) is True
    assert released["status"].get("accumulatedPastExecutionTimeSeconds", 0) > 0
    # As Kueue's spec does: bring the accumulated time close to the maximum.
    await custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        namespace,
        "workloads",
        released["metadata"]["name"],
        {"status": {"accumulatedPastExecutionTimeSeconds": 29}},
        _content_type="application/merge-patch+json",
    )
    await stop_policy("None")
    await eventually(
        workload,
        lambda wl: wl["spec"].get("active") is False,
        timeout=60,
        what="deactivated within a second or two of the new admission",
    )
