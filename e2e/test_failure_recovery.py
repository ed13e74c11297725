"""Kueue's failure-recovery policy on the local cluster.

See docs/concepts.md#pods-stuck-on-an-unreachable-node.

A scheduler with the gate ``FailureRecoveryPolicy`` on forcefully deletes a
pod annotated ``kueue.x-k8s.io/safe-to-forcefully-delete: "true"`` that has
been terminating for a minute on a node tainted
``node.kubernetes.io/unreachable``: its status says ``Failed`` with Kueue's
condition, a Warning Event says why.  The pod here is held terminating by
kwok's delayed ``pod-delete`` stage, as a dead kubelet would hold it.  kwok
keeps its nodes Ready, so the node lifecycle controller would take a
``NoExecute`` unreachable taint off again: the node carries the taint with
the ``PreferNoSchedule`` effect, which only kuota reads (by key, as Kueue).
A pod without the annotation, stuck the same way, is left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from .fixtures import ClusterHandle
from .kuota_install import KUOTA_CONFIG, KuotaWebhook
from .test_retention import start
from .waiting import eventually

pytestmark = pytest.mark.cluster
SAFE = "kueue.x-k8s.io/safe-to-forcefully-delete"
HELD = "pod-delete.stage.kwok.x-k8s.io/delay"


def held_pod(name: str, node: str, *, safe: bool) -> dict[str, Any]:
    annotations = {HELD: "600s", **({SAFE: "true"} if safe else {})}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "nodeName": node,
            "terminationGracePeriodSeconds": 1,
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "main", "image": "busybox"}],
        },
    }


async def pod_or_none(core: client.CoreV1Api, name: str, namespace: str) -> Any:
    try:
        return await core.read_namespaced_pod(name, namespace)
    except ApiException as failure:
        if failure.status == 404:
            return None
        raise


async def test_a_stuck_safe_pod_on_an_unreachable_node_is_forcefully_deleted(
    cluster: ClusterHandle,
    kuota: KuotaWebhook,
    api: client.ApiClient,
    namespace: str,
    fleet_paused: None,
    tmp_path: Path,
) -> None:
    config = yaml.safe_load(KUOTA_CONFIG.read_text())
    config.setdefault("featureGates", {})["FailureRecoveryPolicy"] = True
    config_path = tmp_path / "kuota-config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    core = client.CoreV1Api(api)
    node = f"unreachable-{namespace}"
    capacity = {"cpu": "2", "memory": "8Gi", "pods": "110"}
    await core.create_node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": node, "labels": {"type": "kwok"}},
            "spec": {
                "taints": [{"key": "node.kubernetes.io/unreachable", "effect": "PreferNoSchedule"}]
            },
            "status": {"capacity": capacity, "allocatable": capacity},
        }
    )
    replica = start(cluster, config=config_path)
    try:
        for name, safe in (("safe", True), ("other", False)):
            await core.create_namespaced_pod(namespace, held_pod(name, node, safe=safe))
        await eventually(
            lambda: core.read_namespaced_pod("safe", namespace),
            lambda pod: pod.status.phase == "Running",
            timeout=60,
            what="the pods running on the node",
        )
        for name in ("safe", "other"):
            await core.delete_namespaced_pod(name, namespace)
        still = await core.read_namespaced_pod("safe", namespace)
        assert still.metadata.deletion_timestamp is not None, "held terminating"
        gone = await eventually(
            lambda: pod_or_none(core, "safe", namespace),
            lambda pod: pod is None,
            timeout=120,
            what="the safe pod forcefully deleted a minute after its deletion began",
        )
        assert gone is None
        events = await core.list_namespaced_event(
            namespace, field_selector="involvedObject.name=safe"
        )
        forced = [e for e in events.items if e.reason == "KueueForcefullyDeleted"]
        assert forced and forced[0].type == "Warning"
        assert f"unreachable node `{node}`" in forced[0].message
        other = await core.read_namespaced_pod("other", namespace)
        assert other.metadata.deletion_timestamp is not None, "without the annotation: left alone"
    finally:
        replica.stop()
        for name in ("safe", "other"):
            try:
                await core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
            except ApiException:
                pass
        await core.delete_node(node)
