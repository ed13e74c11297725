"""The one place where the ``kuota`` command talks to a cluster: read-only lists.

``kuota status``, ``kuota explain`` and ``kuota list`` need a picture of the
cluster, nothing more: every kueue.x-k8s.io v1beta2 object, the jobs of every
kind created suspended (Jobs, JobSets) carrying the
queue-name label, Namespaces and PriorityClasses, as the raw JSON the API
server returns (the pure code of ``scheduler.cli.live`` takes it from there),
and the pods kuota started for a job (what an evicted job still runs).
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
from scheduler.jobs import Integration, ReplicaGroups, SuspendOnCreate, capability, integrations
from scheduler.jobs.start_placement import STARTED_PODS_SELECTOR
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
    "namespaces": Resource("", "v1", "namespaces"),
    "priority_classes": Resource("scheduling.k8s.io", "v1", "priorityclasses"),
    "limit_ranges": Resource("", "v1", "limitranges"),
    "runtime_classes": Resource("node.k8s.io", "v1", "runtimeclasses"),
}
PODS = Resource("", "v1", "pods")
NODES = Resource("", "v1", "nodes")


async def _items(
    rest: Rest,
    resource: Resource,
    *,
    selector: str | None = None,
    fields: str | None = None,
    required: bool = False,
) -> list[dict[str, Any]]:
    """The ``items`` of one list (raw dicts); a missing or forbidden kind is empty, if allowed."""
    query = [("labelSelector", selector)] if selector else []
    if fields:
        query.append(("fieldSelector", fields))
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


async def _jobs(rest: Rest, integration: Integration) -> list[dict[str, Any]]:
    """The queued jobs of one kind (list items carry no apiVersion/kind: they are added)."""
    version = integration.api_version.rpartition("/")[2]
    resource = Resource(integration.group, version, integration.resource)
    items = await _items(rest, resource, selector=QUEUE_NAME_LABEL)
    return [{"apiVersion": integration.api_version, "kind": integration.kind, **i} for i in items]


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
            {attribute: _items(rest, resource) for attribute, resource in CORE_RESOURCES.items()}
        )
        calls["pods"] = _items(rest, PODS, selector=STARTED_PODS_SELECTOR)
        kinds = _job_kinds()
        results = await asyncio.gather(
            *calls.values(), *(_jobs(rest, integration) for integration in kinds)
        )
        found = ClusterObjects()
        for attribute, items in zip(calls, results[: len(calls)], strict=True):
            setattr(found, attribute, items)
        found.jobs = [job for items in results[len(calls) :] for job in items]
        if any((f.get("spec") or {}).get("topologyName") for f in found.resource_flavors):
            # Topology-aware scheduling: the nodes, their topologies and what bound pods take.
            found.topologies, found.nodes, found.bound_pods = await asyncio.gather(
                _items(rest, Resource(KUEUE_GROUP, HUB_VERSION, KUEUE_PLURALS["Topology"])),
                _items(rest, NODES),
                _items(rest, PODS, fields="spec.nodeName!="),
            )
        return found


def read_cluster(kubeconfig: str | None) -> ClusterObjects:
    """Every object the live commands need, read through ``kubeconfig`` (a path or a ``:``-list)."""
    paths = [Path(part).expanduser() for part in (kubeconfig or "").split(os.pathsep) if part]
    if kubeconfig is None or not any(path.is_file() for path in paths):
        raise FileNotFoundError(
            f"no kubeconfig file at {kubeconfig}; pass --kubeconfig or set KUBECONFIG"
        )
    return asyncio.run(_read(kubeconfig))


def _job_kinds() -> list[Integration]:
    """The job kinds read and explained: those created suspended (Jobs, JobSets) and those
    whose replicas are queued as groups (LeaderWorkerSets)."""
    return [
        i
        for i in integrations()
        if capability(i, SuspendOnCreate) is not None or capability(i, ReplicaGroups) is not None
    ]
