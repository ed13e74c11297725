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
import os
from pathlib import Path
from typing import Any

from scheduler.api.refs import (
    HUB_VERSION,
    KUEUE_GROUP,
    KUEUE_PLURALS,
    QUEUE_NAME_LABEL,
    KueueKind,
)
from scheduler.cli.live import ClusterObjects
from scheduler.kube.client import connect
from scheduler.kube.rest import ApiError, NotFound, Resource, Rest

KUEUE_RESOURCES: dict[str, KueueKind] = {
    "resource_flavors": "ResourceFlavor",
    "cohorts": "Cohort",
    "cluster_queues": "ClusterQueue",
    "local_queues": "LocalQueue",
    "workload_priority_classes": "WorkloadPriorityClass",
    "admission_checks": "AdmissionCheck",
    "multikueue_clusters": "MultiKueueCluster",
    "workloads": "Workload",
}
"""``ClusterObjects`` attribute -> the kuota kind it holds."""
REQUIRED = "cluster_queues"
"""The kind whose absence means kuota's CRDs are not installed."""
CORE_RESOURCES = {
    "jobs": Resource("batch", "v1", "jobs"),
    "namespaces": Resource("", "v1", "namespaces"),
    "priority_classes": Resource("scheduling.k8s.io", "v1", "priorityclasses"),
}
SELECTORS = {"jobs": QUEUE_NAME_LABEL}
"""Label selectors: only the Jobs that carry a queue name."""


async def _items(
    rest: Rest, resource: Resource, *, selector: str | None = None, required: bool = False
) -> list[dict[str, Any]]:
    """The ``items`` of one list (raw dicts); a missing or forbidden kind is empty, if allowed."""
    query = [("labelSelector", selector)] if selector else []
    try:
        listed = await rest.list(resource.path, query=query)
    except NotFound:
        if required:
            raise RuntimeError(
                f"{resource.plural}.{resource.group}/{resource.version} is not served: "
                "are kuota's CRDs installed?"
            ) from None
        return []
    except ApiError as failure:
        if failure.status == 403:
            return []
        raise
    return [item for item in listed.get("items") or [] if isinstance(item, dict)]


async def _read(kubeconfig: str) -> ClusterObjects:
    async with connect(kubeconfig) as api:
        rest = Rest(api)
        calls = {
            attribute: _items(
                rest,
                Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS[kind]),
                required=attribute == REQUIRED,
            )
            for attribute, kind in KUEUE_RESOURCES.items()
        }
        calls.update(
            {
                attribute: _items(rest, resource, selector=SELECTORS.get(attribute))
                for attribute, resource in CORE_RESOURCES.items()
            }
        )
        results = await asyncio.gather(*calls.values())
        found = ClusterObjects()
        for attribute, items in zip(calls, results, strict=True):
            setattr(found, attribute, items)
        return found


def read_cluster(kubeconfig: str | None) -> ClusterObjects:
    """Every object the live commands need, read through ``kubeconfig`` (a path or a ``:``-list)."""
    paths = [Path(part).expanduser() for part in (kubeconfig or "").split(os.pathsep) if part]
    if kubeconfig is None or not any(path.is_file() for path in paths):
        raise FileNotFoundError(
            f"no kubeconfig file at {kubeconfig}; pass --kubeconfig or set KUBECONFIG"
        )
    return asyncio.run(_read(kubeconfig))
