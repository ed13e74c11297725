"""An admitted Job keeps what its quota was reserved for (JOB-K2, docs/validation.md#jobs).

Were a change of ``parallelism`` of an admitted Job accepted, the Job would
run more pods than its quota reserved and nothing would react.  On the local
cluster, with kuota's webhook and scheduler running:

* a queued Job that kuota admitted and started refuses ``kubectl patch`` of
  ``spec.parallelism``, with the message naming the field, the reserved pod
  count and what to do;
* kube-apiserver itself refuses every change of the pod template of that
  running Job (which is why JOB-K2 has no template rule: the webhook is
  never asked);
* a queued Job still pending (suspended) may change its parallelism.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client

from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import KuotaWebhook
from scheduler.jobs.batchjob import validate_job

from .fixtures import ClusterHandle
from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
QUEUE = "kueue.x-k8s.io/queue-name"


def kubectl(cluster: ClusterHandle, namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    binary: Path = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    return subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), "-n", namespace, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def job(name: str, queue: str, *, parallelism: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {QUEUE: queue}},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "template": {
                # kwok keeps the pods running for the length of the test
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "300s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}},
                        }
                    ],
                },
            },
        },
    }


@pytest.fixture
async def queue(api: client.ApiClient, namespace: str) -> AsyncIterator[str]:
    """A LocalQueue ``team`` in ``namespace`` on a ClusterQueue with 4 CPUs."""
    custom = client.CustomObjectsApi(api)
    flavor, cluster_queue = f"quota-{namespace}", f"quota-{namespace}"
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
            "metadata": {"name": cluster_queue},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": flavor, "resources": [{"name": "cpu", "nominalQuota": "4"}]}
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
            "metadata": {"name": "team"},
            "spec": {"clusterQueue": cluster_queue},
        },
    )
    yield "team"
    batch = client.BatchV1Api(api)
    for item in (await batch.list_namespaced_job(namespace)).items:
        await batch.delete_namespaced_job(
            item.metadata.name, namespace, propagation_policy="Background"
        )
    await custom.delete_cluster_custom_object(GROUP, VERSION, "clusterqueues", cluster_queue)
    await custom.delete_cluster_custom_object(GROUP, VERSION, "resourceflavors", flavor)


async def test_an_admitted_jobs_parallelism_cannot_change_but_a_pending_ones_can(
    cluster: ClusterHandle,
    kuota: KuotaWebhook,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    queue: str,
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(namespace, job("admitted", queue, parallelism=2))
    running = await eventually(
        lambda: batch.read_namespaced_job("admitted", namespace),
        lambda j: j.spec.suspend is False,
        timeout=60,
        what="kuota's scheduler admitting and starting the Job",
    )
    assert running.spec.parallelism == 2

    refused = kubectl(
        cluster, namespace, "patch", "job", "admitted", "--type=merge", "-p",
        '{"spec":{"parallelism":3}}',
    )  # fmt: skip
    assert refused.returncode != 0
    stored = await batch.read_namespaced_job("admitted", namespace)
    assert stored.spec.parallelism == 2, "nothing was changed"
    raw = json.loads(kubectl(cluster, namespace, "get", "job", "admitted", "-o", "json").stdout)
    wanted = dict(raw, spec=dict(raw["spec"], parallelism=3))
    (expected,) = validate_job(wanted, raw, managed=True)
    assert expected.rule == "JOB-K2"
    assert expected.render() == (
        "spec.parallelism: cannot change while the job is admitted by kuota (its quota was "
        "reserved for 2 pods); to resize it, suspend it in the same update (spec.suspend: true), "
        "and kuota releases the quota and queues it again with the new value; a job created "
        'with the annotation kueue.x-k8s.io/elastic-job: "true" may change its size while it runs, '
        "see docs/api-differences.md#elastic-jobs"
    )
    assert expected.render() in refused.stderr, refused.stderr

    # The template is kube-apiserver's to guard on a running Job: it refuses before any webhook.
    template = kubectl(
        cluster, namespace, "patch", "job", "admitted", "--type=json", "-p",
        json.dumps([{
            "op": "replace",
            "path": "/spec/template/spec/containers/0/resources/requests/cpu",
            "value": "2",
        }]),
    )  # fmt: skip
    assert template.returncode != 0
    assert "spec.template: Invalid value" in template.stderr, template.stderr
    assert "field is immutable" in template.stderr and "kuota" not in template.stderr

    await batch.create_namespaced_job(namespace, job("pending", "no-such-queue", parallelism=2))
    assert (await batch.read_namespaced_job("pending", namespace)).spec.suspend is True
    resized = kubectl(
        cluster, namespace, "patch", "job", "pending", "--type=merge", "-p",
        '{"spec":{"parallelism":3}}',
    )  # fmt: skip
    assert resized.returncode == 0, resized.stderr
    assert (await batch.read_namespaced_job("pending", namespace)).spec.parallelism == 3
