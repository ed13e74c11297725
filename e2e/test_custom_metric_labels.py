"""``metrics.customLabels`` on the local cluster (docs/metrics.md#custom-labels).

A scheduler started with the ``CustomMetricLabels`` gate and two entries (a
ClusterQueue label, a Workload annotation): the Job's annotation is copied
to its Workload, and the series carry ``custom_team`` from the ClusterQueue
(which follows a relabelled queue) and ``custom_tier`` from the Workload.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client

from .fixtures import ClusterHandle
from .kuota_install import KUOTA_CONFIG, KuotaWebhook
from .kuota_scheduler import SchedulerReplica
from .test_metrics import GROUP, VERSION, job, samples, team
from .test_retention import start
from .waiting import eventually

pytestmark = pytest.mark.cluster
TIER = "example.com/tier"
MERGE = "application/merge-patch+json"
__all__ = ["team"]  # the fixture, shared with test_metrics


@pytest.fixture(scope="module")
def labelled_scheduler(
    cluster: ClusterHandle,
    kuota: KuotaWebhook,
    fleet_paused: None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SchedulerReplica]:
    """The only scheduler while this module runs: the chart's Configuration, custom labels on."""
    config = yaml.safe_load(KUOTA_CONFIG.read_text())
    config.setdefault("featureGates", {})["CustomMetricLabels"] = True
    config["metrics"]["customLabels"] = [
        {"name": "team"},
        {
            "name": "tier",
            "sourceKind": "Workload",
            "sourceAnnotationKey": TIER,
            "trackedValues": ["gold"],
        },
    ]
    path = Path(tmp_path_factory.mktemp("custom-labels")) / "kuota-config.yaml"
    path.write_text(yaml.safe_dump(config))
    replica = start(cluster, path)
    yield replica
    replica.stop()


async def test_series_carry_the_queues_and_the_workloads_labels(
    labelled_scheduler: SchedulerReplica,
    api: client.ApiClient,
    namespace: str,
    team: dict[str, str],
) -> None:
    custom = client.CustomObjectsApi(api)
    cq = team["cq"]

    async def label_team(value: str) -> None:
        patch = {"metadata": {"labels": {"team": value}}}
        await custom.patch_cluster_custom_object(
            GROUP, VERSION, "clusterqueues", cq, patch, _content_type=MERGE
        )

    await label_team("vision")
    fits = job("fits", team["lq"], cpu="1")
    fits["metadata"]["annotations"] = {TIER: "gold", "example.com/other": "x"}
    await client.BatchV1Api(api).create_namespaced_job(namespace, fits)

    def workload_of_fits(listed: dict[str, Any]) -> dict[str, Any]:
        found = [w for w in listed["items"] if w["metadata"]["name"].startswith("job-fits-")]
        return found[0] if found else {}

    workload = await eventually(
        lambda: custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "workloads"),
        lambda listed: bool(workload_of_fits(listed)),
        timeout=60,
        what="the Job's Workload",
    )
    annotations = workload_of_fits(workload)["metadata"].get("annotations") or {}
    assert annotations.get(TIER) == "gold"
    assert "example.com/other" not in annotations

    def series(name: str, **labels: str) -> tuple[str, frozenset[tuple[str, str]]]:
        return name, frozenset({**labels, "replica_role": "leader"}.items())

    wanted = {
        series(
            "kueue_admitted_workloads_total",
            cluster_queue=cq,
            priority_class="",
            custom_team="vision",
        ): 1.0,
        series(
            "kueue_admitted_active_workloads",
            cluster_queue=cq,
            custom_team="vision",
            custom_tier="gold",
        ): 1.0,
    }

    async def read() -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
        status, text = labelled_scheduler.endpoint("/metrics")
        assert status == 200, text
        found = samples(text)
        return {key: found[key] for key in wanted if key in found}

    await eventually(
        read, lambda got: got == wanted, timeout=60, what="the admitted Job's labelled series"
    )

    await label_team("speech")
    moved = series(
        "kueue_admitted_active_workloads",
        cluster_queue=cq,
        custom_team="speech",
        custom_tier="gold",
    )

    async def gauge() -> float | None:
        status, text = labelled_scheduler.endpoint("/metrics")
        assert status == 200, text
        return samples(text).get(moved)

    await eventually(
        gauge,
        lambda value: value == 1.0,
        timeout=30,
        what="the gauge following the relabelled queue",
    )
