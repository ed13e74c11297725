"""Nodes and pods as topology-aware scheduling reads them (pure conversions of API objects).

See docs/concepts.md#topology-aware-scheduling.  A Node becomes a
``NodeInfo``: its labels, allocatable resources, taints, and whether pods
may go there (``Ready`` and not cordoned).  A Pod becomes a ``PodUsage``:
counted on its node while it is bound and has not finished, unless kuota
placed it by topology (its Workload's placement already counts it).  The
scheduler's watches and the CLI's picture of a cluster both read them here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from scheduler.api import objects
from scheduler.api.field import ParseError
from scheduler.api.models import Taint
from scheduler.api.objects import parse_time
from scheduler.api.parse import parse_pod_requests
from scheduler.api.quantity import Quantity, QuantityError
from scheduler.core.resources import to_int
from scheduler.core.tas.tree import NodeInfo, PodUsage
from scheduler.jobs.topology import is_tas_pod

FINISHED_PHASES: Final = ("Succeeded", "Failed")
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def _ready(node: Mapping[str, Any]) -> bool:
    for condition in objects.status(node).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def not_ready_since(node: Mapping[str, Any]) -> datetime | None:
    """When a Node stopped being ``Ready`` (None: it is Ready): pure.

    A Node without a readable ``Ready`` condition time counts from the epoch:
    not ready for as long as anyone can tell.
    """
    for condition in objects.status(node).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "Ready":
            if condition.get("status") == "True":
                return None
            return parse_time(condition.get("lastTransitionTime")) or EPOCH
    return EPOCH


def _amounts(resources: object) -> dict[str, int]:
    amounts: dict[str, int] = {}
    for name, value in (resources if isinstance(resources, Mapping) else {}).items():
        try:
            amounts[str(name)] = to_int(str(name), Quantity.parse(value))
        except (QuantityError, ValueError, TypeError):
            continue  # a quantity the API server would not have stored
    return amounts


def node_info(node: Mapping[str, Any]) -> NodeInfo:
    """A Node as placement reads it: pure."""
    spec = objects.spec(node)
    taints = tuple(
        Taint(
            key=str(item.get("key", "")),
            value=str(item.get("value", "")),
            effect=str(item.get("effect", "")),
        )
        for item in spec.get("taints") or []
        if isinstance(item, Mapping)
    )
    return NodeInfo(
        name=objects.name(node),
        labels=objects.labels(node),
        allocatable=_amounts(objects.status(node).get("allocatable")),
        taints=taints,
        schedulable=_ready(node) and not spec.get("unschedulable"),
    )


def pod_usage(pod: Mapping[str, Any]) -> PodUsage:
    """What a Pod takes on its node, for placement (``node`` None: nothing): pure."""
    key = f"{objects.namespace(pod)}/{objects.name(pod)}"
    node = objects.spec(pod).get("nodeName")
    if (
        not node
        or objects.status(pod).get("phase") in FINISHED_PHASES
        or is_tas_pod(objects.annotations(pod))
    ):
        return PodUsage(key=key, node=None, requests={})
    try:
        requests = parse_pod_requests(pod)
    except ParseError:
        return PodUsage(key=key, node=None, requests={})
    return PodUsage(
        key=key,
        node=str(node),
        requests={name: to_int(name, value) for name, value in requests.items()},
    )


__all__ = ["node_info", "pod_usage"]
