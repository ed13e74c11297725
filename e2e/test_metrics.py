"""/metrics on the local cluster: HTTPS, TokenReview and SubjectAccessReview, and the values.

Read as Prometheus reads it, with a ServiceAccount token: the chart's
metrics-reader ClusterRole lets a token read the series (with the values a
Job's admission gives them: the priority class and the cohort filled in, the
pending split active/inadmissible); a token without the role gets 403, no
token 401 (docs/metrics.md#access).  The scheduler's and the webhook's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from prometheus_client.parser import text_string_to_metric_families

from . import metrics_access
from .cluster.tools import ToolPaths
from .fixtures import ClusterHandle
from .kuota_install import KuotaWebhook
from .kuota_scheduler import SchedulerReplica
from .waiting import eventually

pytestmark = pytest.mark.cluster
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def job(name: str, queue: str, *, cpu: str, priority_class: str | None = None) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue}
    if priority_class:
        labels[PRIORITY_LABEL] = priority_class
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "300s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": cpu}},
                        }
                    ],
                },
            }
        },
    }


@pytest.fixture
async def team(api: client.ApiClient, namespace: str) -> AsyncIterator[dict[str, str]]:
    """A flavor, a ClusterQueue of 2 CPUs in cohort ``team-<ns>``, a LocalQueue, a priority."""
    custom = client.CustomObjectsApi(api)
    names = {
        "flavor": f"metrics-{namespace}",
        "cq": f"metrics-{namespace}",
        "cohort": f"team-{namespace}",
        "lq": "lq",
        "priority": f"high-{namespace}",
    }
    kueue = {"apiVersion": f"{GROUP}/{VERSION}"}
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "resourceflavors",
        {**kueue, "kind": "ResourceFlavor", "metadata": {"name": names["flavor"]}, "spec": {}},
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "workloadpriorityclasses",
        {
            **kueue,
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": names["priority"]},
            "value": 100,
        },
    )
    await custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "clusterqueues",
        {
            **kueue,
            "kind": "ClusterQueue",
            "metadata": {"name": names["cq"]},
            "spec": {
                "cohortName": names["cohort"],
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": names["flavor"],
                                "resources": [{"name": "cpu", "nominalQuota": "2"}],
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
            **kueue,
            "kind": "LocalQueue",
            "metadata": {"name": names["lq"]},
            "spec": {"clusterQueue": names["cq"]},
        },
    )
    yield names
    batch = client.BatchV1Api(api)
    for name in ("fits", "too-big"):
        try:
            await batch.delete_namespaced_job(name, namespace, propagation_policy="Background")
        except client.ApiException:
            pass
    for plural, name in (
        ("clusterqueues", names["cq"]),
        ("resourceflavors", names["flavor"]),
        ("workloadpriorityclasses", names["priority"]),
    ):
        try:
            await custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
        except client.ApiException:
            pass


def _workdir(cluster: ClusterHandle) -> Path:
    assert cluster.workdir is not None
    return cluster.workdir


async def test_an_allowed_token_reads_the_series_of_an_admitted_job(
    cluster: ClusterHandle,
    kuota_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    team: dict[str, str],
) -> None:
    batch = client.BatchV1Api(api)
    await batch.create_namespaced_job(
        namespace, job("fits", team["lq"], cpu="1", priority_class=team["priority"])
    )
    await batch.create_namespaced_job(namespace, job("too-big", team["lq"], cpu="5"))
    cq, role = team["cq"], "leader"
    quota = {"cohort": team["cohort"], "cluster_queue": cq, "flavor": team["flavor"]}
    wanted: dict[tuple[str, frozenset[tuple[str, str]]], float] = {
        (name, frozenset({**labels, "replica_role": role}.items())): value
        for name, labels, value in [
            (
                "kueue_admitted_workloads_total",
                {"cluster_queue": cq, "priority_class": team["priority"]},
                1,
            ),
            (
                "kueue_quota_reserved_workloads_total",
                {"cluster_queue": cq, "priority_class": team["priority"]},
                1,
            ),
            (
                "kueue_admission_wait_time_seconds_count",
                {"cluster_queue": cq, "priority_class": team["priority"]},
                1,
            ),
            ("kueue_pending_workloads", {"cluster_queue": cq, "status": "active"}, 0),
            ("kueue_pending_workloads", {"cluster_queue": cq, "status": "inadmissible"}, 1),
            (
                "kueue_local_queue_pending_workloads",
                {"name": team["lq"], "namespace": namespace, "status": "inadmissible"},
                1,
            ),
            (
                "kueue_local_queue_admitted_workloads_total",
                {"name": team["lq"], "namespace": namespace, "priority_class": team["priority"]},
                1,
            ),
            ("kueue_reserving_active_workloads", {"cluster_queue": cq}, 1),
            ("kueue_cluster_queue_status", {"cluster_queue": cq, "status": "active"}, 1),
            ("kueue_cluster_queue_nominal_quota", {**quota, "resource": "cpu"}, 2),
            ("kueue_cluster_queue_resource_usage", {**quota, "resource": "cpu"}, 1),
            ("kueue_cluster_queue_resource_pending", {"cluster_queue": cq, "resource": "cpu"}, 5),
            (
                "kueue_cluster_queue_info",
                {
                    "cluster_queue": cq,
                    "parent_cohort": team["cohort"],
                    "root_cohort": team["cohort"],
                },
                1,
            ),
            (
                "kueue_cohort_subtree_quota",
                {"cohort": team["cohort"], "flavor": team["flavor"], "resource": "cpu"},
                2,
            ),
        ]
    }

    async def read() -> Samples:
        status, text = kuota_scheduler.endpoint("/metrics")
        assert status == 200, text
        found = samples(text)
        return {key: found[key] for key in wanted if key in found}

    await eventually(
        read,
        lambda got: got == wanted,
        timeout=60,
        what="the series of one admitted and one inadmissible Job",
    )


async def test_a_token_without_the_role_gets_403_and_none_401(
    cluster: ClusterHandle,
    kuota: KuotaWebhook,
    kuota_scheduler: SchedulerReplica,
) -> None:
    workdir = _workdir(cluster)
    kubectl = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    stranger = metrics_access.service_account_token(
        kubectl, cluster.kubeconfig, "kuota-metrics-stranger"
    )
    reader = metrics_access.reader_token(kubectl, cluster.kubeconfig, workdir)
    endpoints = [
        (kuota_scheduler.metrics_url, workdir / metrics_access.CERT_DIR / "ca.crt", "kueue_"),
        (kuota.metrics_url, kuota.cert_dir / "ca.crt", "kuota_webhook_requests_total"),
    ]
    for url, ca, marker in endpoints:
        status, text = metrics_access.scrape(url, token=None, ca=ca)
        assert (status, text.split(":")[0]) == (401, "Unauthorized"), url
        status, text = metrics_access.scrape(url, token="not-a-token", ca=ca)
        assert status == 401, (url, text)
        status, text = metrics_access.scrape(url, token=stranger, ca=ca)
        assert status == 403 and "kuota-metrics-stranger may not get /metrics" in text, url
        status, text = metrics_access.scrape(url, token=reader, ca=ca)
        assert status == 200 and marker in text, url
