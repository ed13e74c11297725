"""What each page of the dashboard shows, as JSON-ready data (pure; docs/dashboard.md).

Every function reads one picture of the cluster (raw objects) and its
:class:`~scheduler.dashboard.analysis.Analysis`, and returns plain dicts and
lists the browser renders as they are.  Nothing is worded twice: a
Workload's state is ``kuota list``'s (:func:`scheduler.cli.listing.workload_state`),
its reason while pending is the engine's, and its full explanation is
``kuota explain``'s own lines (:func:`scheduler.cli.explain.explain_workload`).

An amount is ``{"text": "500m", "value": 0.5}``: the canonical Kubernetes
text and a number in Kueue's reporting unit (cores for cpu), for the bars
and plots.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from scheduler.api import objects as raw
from scheduler.cli.explain import explain_workload
from scheduler.cli.explain_target import find_target
from scheduler.cli.listing import flavors_text, pending_message, workload_state
from scheduler.cli.live import ClusterObjects, age, key_of, owner_job_uid
from scheduler.core.resource_node import QuotaNode, borrowed
from scheduler.core.resources import format_amount
from scheduler.dashboard.analysis import Analysis
from scheduler.metrics.gauges import amount as reporting_amount

Json = dict[str, Any]


def quantity(resource: str, value: int | None) -> Json | None:
    """An engine integer as text and number (None stays None: unset): pure."""
    if value is None:
        return None
    return {"text": format_amount(resource, value), "value": reporting_amount(resource, value)}


def _conditions(obj: Mapping[str, Any]) -> list[Json]:
    return [
        {
            "type": c.get("type"),
            "status": c.get("status"),
            "reason": c.get("reason"),
            "message": c.get("message"),
            "lastTransitionTime": c.get("lastTransitionTime"),
        }
        for c in raw.conditions(obj)
    ]


# --- ClusterQueues ------------------------------------------------------------------------


def _quota_rows(node: QuotaNode | None, reserved: Mapping[Any, int]) -> list[Json]:
    if node is None:
        return []
    rows = []
    for fr in sorted(node.nominal):
        flavor, resource = fr
        rows.append(
            {
                "flavor": flavor,
                "resource": resource,
                "nominal": quantity(resource, node.nominal[fr]),
                "borrowingLimit": quantity(resource, node.borrowing_limit.get(fr)),
                "lendingLimit": quantity(resource, node.lending_limit.get(fr)),
                "reserved": quantity(resource, reserved.get(fr, 0)),
                "borrowed": quantity(resource, borrowed(node, fr)),
            }
        )
    return rows


def cluster_queues(objects: ClusterObjects, analysis: Analysis) -> list[Json]:
    """Every ClusterQueue: status, counts, quota and use, policies, its LocalQueues: pure."""
    feeding: dict[str, list[str]] = {}
    for lq in objects.local_queues:
        target = str(raw.spec(lq).get("clusterQueue") or "")
        feeding.setdefault(target, []).append(key_of(lq))
    found = []
    for queue in sorted(objects.cluster_queues, key=raw.name):
        name = raw.name(queue)
        spec = raw.spec(queue)
        status = analysis.cluster_queue(name)
        node = analysis.node(name)
        reserved = analysis.engine.cache.usage.get(name, {})
        share = analysis.weighted_share(node) if node is not None and node.parent else 0.0
        found.append(
            {
                "name": name,
                "cohort": spec.get("cohortName") or "",
                "active": bool(status and status.active),
                "message": status.active_message if status else "not loaded",
                "pending": status.pending if status else 0,
                "reserving": status.reserving if status else 0,
                "admitted": status.admitted if status else 0,
                "weightedShare": share,
                "queueingStrategy": spec.get("queueingStrategy") or "BestEffortFIFO",
                "preemption": spec.get("preemption") or {},
                "flavorFungibility": spec.get("flavorFungibility") or {},
                "stopPolicy": spec.get("stopPolicy") or "None",
                "admissionChecks": [
                    check.get("name")
                    for check in (spec.get("admissionChecksStrategy") or {}).get(
                        "admissionChecks", []
                    )
                ]
                + list(spec.get("admissionChecks") or []),
                "quota": _quota_rows(node, reserved),
                "localQueues": sorted(feeding.get(name, [])),
                "conditions": _conditions(queue),
            }
        )
    return found


# --- cohorts ----------------------------------------------------------------------------


def _tree(node: QuotaNode, analysis: Analysis) -> Json:
    rows = []
    for fr in sorted(set(node.subtree_quota) | set(node.usage)):
        flavor, resource = fr
        subtree = node.subtree_quota.get(fr, 0)
        lendable = subtree - node.local_quota.get(fr, 0)
        over = max(0, node.usage.get(fr, 0) - subtree) if node.parent is not None else 0
        rows.append(
            {
                "flavor": flavor,
                "resource": resource,
                "nominal": quantity(resource, node.nominal.get(fr, 0)),
                "subtreeQuota": quantity(resource, subtree),
                "lends": quantity(resource, lendable if node.parent is not None else 0),
                "lendingLimit": quantity(resource, node.lending_limit.get(fr)),
                "borrowingLimit": quantity(resource, node.borrowing_limit.get(fr)),
                "usage": quantity(resource, node.usage.get(fr, 0)),
                "borrows": quantity(resource, over),
            }
        )
    children = sorted(node.children, key=lambda child: (not child.is_cohort, child.name))
    return {
        "name": node.name,
        "kind": "Cohort" if node.is_cohort else "ClusterQueue",
        "weightedShare": analysis.weighted_share(node) if node.parent is not None else 0.0,
        "resources": rows,
        "children": [_tree(child, analysis) for child in children],
    }


def cohorts(analysis: Analysis) -> list[Json]:
    """Every cohort tree, root first, with what each node lends to and borrows from its
    parent (docs/scheduling.md#the-quota-tree): pure."""
    return [_tree(root, analysis) for root in analysis.cohort_roots()]


# --- LocalQueues -------------------------------------------------------------------------


def local_queues(
    objects: ClusterObjects, analysis: Analysis, namespaces: Collection[str] | None
) -> list[Json]:
    """The LocalQueues of ``namespaces`` (None: all) with their Workloads' counts: pure."""
    counts: dict[str, dict[str, int]] = {}
    for workload in objects.workloads:
        key = f"{raw.namespace(workload) or ''}/{raw.workload_queue_name(workload)}"
        state = workload_state(workload)
        bucket = counts.setdefault(key, {})
        bucket[state] = bucket.get(state, 0) + 1
    found = []
    for queue in sorted(objects.local_queues, key=key_of):
        namespace = raw.namespace(queue) or ""
        if namespaces is not None and namespace not in namespaces:
            continue
        key = key_of(queue)
        by_state = counts.get(key, {})
        active = raw.condition(queue, "Active") or {}
        found.append(
            {
                "namespace": namespace,
                "name": raw.name(queue),
                "clusterQueue": raw.spec(queue).get("clusterQueue") or "",
                "active": active.get("status") == "True",
                "message": active.get("message") or "",
                "stopPolicy": raw.spec(queue).get("stopPolicy") or "None",
                "pending": by_state.get("Pending", 0),
                "reserving": by_state.get("QuotaReserved", 0) + by_state.get("Admitted", 0),
                "admitted": by_state.get("Admitted", 0),
                "finished": by_state.get("Finished", 0),
                "flavorsUsage": (raw.status(queue).get("flavorsUsage") or []),
                "conditions": _conditions(queue),
            }
        )
    return found


# --- Workloads -------------------------------------------------------------------------


def _job_names(objects: ClusterObjects) -> dict[str, str]:
    return {
        str(raw.uid(job)): f"{str(job.get('kind') or 'Job').lower()}/{raw.name(job)}"
        for job in objects.jobs
    }


def workload_row(workload: Mapping[str, Any], analysis: Analysis, jobs: Mapping[str, str]) -> Json:
    """One Workload as the lists show it: state, position and reason: pure."""
    key = key_of(workload)
    state = workload_state(workload)
    queue = raw.workload_queue_name(workload)
    row: Json = {
        "namespace": raw.namespace(workload) or "",
        "name": raw.name(workload),
        "queue": queue,
        "clusterQueue": raw.admitted_cluster_queue(workload),
        "state": state,
        "priorityClass": raw.priority_class_name(workload),
        "priority": raw.spec(workload).get("priority"),
        "flavors": flavors_text(workload),
        "age": age(raw.creation_time(workload), analysis.now),
        "created": raw.metadata(workload).get("creationTimestamp"),
        "job": jobs.get(owner_job_uid(workload) or "", ""),
        "position": None,
        "pendingIn": None,
        "reason": None,
        "message": pending_message(workload, state),
        "preempted": raw.is_true(workload, "Preempted"),
    }
    if state == "Pending":
        engine_state = analysis.workload(key)
        placement = analysis.placement(key)
        if placement is not None:
            row["position"], row["pendingIn"] = placement.position, placement.of
        if engine_state is not None:
            row["clusterQueue"] = engine_state.cluster_queue or row["clusterQueue"]
            if engine_state.state == "Admitted":
                row["reason"] = "FitsNow"
                row["message"] = "it fits now: the scheduler's next cycle should admit it"
            else:
                row["reason"] = engine_state.reason or "Pending"
                row["message"] = engine_state.message or "not examined yet"
    return row


def workloads(
    objects: ClusterObjects, analysis: Analysis, namespaces: Collection[str] | None
) -> list[Json]:
    """The Workloads of ``namespaces`` (None: all), pending first by position: pure."""
    jobs = _job_names(objects)
    rows = [
        workload_row(workload, analysis, jobs)
        for workload in objects.workloads
        if namespaces is None or (raw.namespace(workload) or "") in namespaces
    ]
    order = {"Pending": 0, "QuotaReserved": 1, "Evicted": 1, "Admitted": 2, "Inactive": 3}
    return sorted(
        rows,
        key=lambda row: (
            order.get(row["state"], 4),
            row["clusterQueue"] or "",
            row["position"] or 0,
            row["namespace"],
            row["name"],
        ),
    )


def workload_detail(
    objects: ClusterObjects, analysis: Analysis, namespace: str, name: str, now: datetime
) -> Json | None:
    """One Workload in full: its row, ``kuota explain``'s lines, conditions, pods: pure."""
    target = find_target(objects, f"workload/{name}", namespace)
    if isinstance(target, str) or target.workload is None:
        return None
    workload = target.workload
    uid = owner_job_uid(workload) or ""
    pods = [
        {
            "name": raw.name(pod),
            "phase": raw.status(pod).get("phase"),
            "node": raw.spec(pod).get("nodeName"),
        }
        for pod in objects.pods
        if raw.label(pod, "kueue.x-k8s.io/job-uid") == uid and uid
    ]
    return {
        **workload_row(workload, analysis, _job_names(objects)),
        "explanation": explain_workload(objects, target, now),
        "conditions": _conditions(workload),
        "admission": raw.admission(workload) or {},
        "admissionChecks": list(raw.status(workload).get("admissionChecks") or []),
        "pods": sorted(pods, key=lambda pod: str(pod["name"])),
        "object": workload,
    }


# --- flavors and overview ------------------------------------------------------------------


def resource_flavors(
    objects: ClusterObjects, nodes: Collection[Mapping[str, Any]] | None = None
) -> list[Json]:
    """Every ResourceFlavor, the ClusterQueues that offer it and the Nodes its labels select
    (``nodes`` None: not shown): pure."""
    offering: dict[str, list[str]] = {}
    for queue in objects.cluster_queues:
        for group in raw.spec(queue).get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                offering.setdefault(str(flavor.get("name")), []).append(raw.name(queue))
    return [
        {
            "name": raw.name(flavor),
            "nodeLabels": raw.spec(flavor).get("nodeLabels") or {},
            "nodeTaints": raw.spec(flavor).get("nodeTaints") or [],
            "tolerations": raw.spec(flavor).get("tolerations") or [],
            "topologyName": raw.spec(flavor).get("topologyName") or "",
            "clusterQueues": sorted(set(offering.get(raw.name(flavor), []))),
            "nodes": None if nodes is None else _matching(flavor, nodes),
        }
        for flavor in sorted(objects.resource_flavors, key=raw.name)
    ]


def _matching(flavor: Mapping[str, Any], nodes: Collection[Mapping[str, Any]]) -> list[str]:
    wanted = raw.spec(flavor).get("nodeLabels") or {}
    return sorted(
        raw.name(node)
        for node in nodes
        if all(raw.labels(node).get(key) == value for key, value in wanted.items())
    )


def overview(
    objects: ClusterObjects, analysis: Analysis, namespaces: Collection[str] | None
) -> Json:
    """Counts for the landing page: pure."""
    states: dict[str, int] = {}
    for workload in objects.workloads:
        if namespaces is None or (raw.namespace(workload) or "") in namespaces:
            state = workload_state(workload)
            states[state] = states.get(state, 0) + 1
    return {
        "clusterQueues": len(objects.cluster_queues),
        "cohorts": len(analysis.engine.cache.tree.forest.cohorts),
        "localQueues": len(objects.local_queues),
        "resourceFlavors": len(objects.resource_flavors),
        "workloads": states,
        "steady": analysis.reached,
        "notes": analysis.notes,
    }


__all__ = [
    "cluster_queues",
    "cohorts",
    "local_queues",
    "overview",
    "quantity",
    "resource_flavors",
    "workload_detail",
    "workload_row",
    "workloads",
]
