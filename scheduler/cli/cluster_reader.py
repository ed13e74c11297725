"""The one place where the ``kuota`` command talks to a cluster: read-only lists.

``kuota status``, ``kuota explain`` and ``kuota list`` need a picture of the
cluster, nothing more: every kueue.x-k8s.io v1beta2 object, the Jobs carrying
the queue-name label, Namespaces and PriorityClasses, as the raw JSON the API
server returns (the pure code of ``scheduler.cli.live`` takes it from there).
It never writes; it lists through the user's kubeconfig, with the user's
rights.  A kind that is not installed (404) or not readable (403) is read as
empty, so a partial view still answers; the CRDs not being installed at all is
an error worth saying.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from kubernetes_asyncio import client, config
from kubernetes_asyncio.client.exceptions import ApiException

from scheduler.cli.live import QUEUE_NAME_LABEL, ClusterObjects

GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
KUEUE_PLURALS = {
    "resource_flavors": "resourceflavors",
    "cohorts": "cohorts",
    "cluster_queues": "clusterqueues",
    "local_queues": "localqueues",
    "workload_priority_classes": "workloadpriorityclasses",
    "admission_checks": "admissionchecks",
    "workloads": "workloads",
}
NAMESPACED = {"local_queues", "workloads"}


async def _items(
    call: Any, *args: Any, required: bool = False, **kwargs: Any
) -> list[dict[str, Any]]:
    """The ``items`` of one list call as raw dicts; a missing or forbidden kind is empty unless ``required``."""
    try:
        response = await call(*args, _preload_content=False, **kwargs)
    except ApiException as failure:
        if failure.status == 404 and required:
            raise RuntimeError(
                f"{args[-1]}.{GROUP}/{VERSION} is not served: are kuota's CRDs installed?"
            ) from None
        if failure.status in (403, 404):
            return []
        raise
    try:
        body = json.loads(await response.read())
    finally:
        response.release()
    return [item for item in body.get("items") or [] if isinstance(item, dict)]


async def _read(kubeconfig: str) -> ClusterObjects:
    configuration = client.Configuration()
    await config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    async with client.ApiClient(configuration=configuration) as api:
        custom = client.CustomObjectsApi(api)
        objects = ClusterObjects()
        calls = {}
        for attribute, plural in KUEUE_PLURALS.items():
            if attribute in NAMESPACED:
                calls[attribute] = _items(
                    custom.list_custom_object_for_all_namespaces, GROUP, VERSION, plural
                )
            else:
                calls[attribute] = _items(
                    custom.list_cluster_custom_object,
                    GROUP,
                    VERSION,
                    plural,
                    required=attribute == "cluster_queues",
                )
        calls["jobs"] = _items(
            client.BatchV1Api(api).list_job_for_all_namespaces, label_selector=QUEUE_NAME_LABEL
        )
        calls["namespaces"] = _items(client.CoreV1Api(api).list_namespace)
        calls["priority_classes"] = _items(client.SchedulingV1Api(api).list_priority_class)
        results = await asyncio.gather(*calls.values())
        for attribute, items in zip(calls, results):
            setattr(objects, attribute, items)
        return objects


def read_cluster(kubeconfig: str | None) -> ClusterObjects:
    """Every object the live commands need, read through ``kubeconfig`` (a path or a ``:``-list of paths)."""
    paths = [Path(part).expanduser() for part in (kubeconfig or "").split(os.pathsep) if part]
    if not any(path.is_file() for path in paths):
        raise FileNotFoundError(
            f"no kubeconfig file at {kubeconfig}; pass --kubeconfig or set KUBECONFIG"
        )
    return asyncio.run(_read(kubeconfig))  # type: ignore[arg-type]
