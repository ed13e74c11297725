"""How ``kuota simulate`` reports a steady state: the contract's JSON object
and a readable table of the same facts (docs/validation.md#kuota-simulate).

Pure functions of the engine's read-outs (``WorkloadState`` and
``ClusterQueueStatus`` of ``scheduler.core.engine``), so they can be tested
with small stand-ins of those types.  Quantities are printed by a formatter
the caller passes (the engine's canonical form in practice).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from scheduler.api.quantity import Quantity
from scheduler.api.topology_assignment import TopologyAssignment

QuantityFormatter = Callable[[str, Quantity], str]


class PodSetAdmissionLike(Protocol):
    name: str
    flavors: Mapping[str, str]
    topology_assignment: TopologyAssignment | None


class WorkloadStateLike(Protocol):
    key: str
    state: str
    cluster_queue: str | None
    admission: tuple[PodSetAdmissionLike, ...]
    message: str
    evictions: int


class ClusterQueueStatusLike(Protocol):
    name: str
    pending: int
    admitted: int
    usage: Mapping[str, Mapping[str, Quantity]]


def workload_entry(state: WorkloadStateLike) -> dict[str, Any]:
    """One ``workloads`` entry of the contract: pure."""
    admitted = state.state == "Admitted"
    entry: dict[str, Any] = {
        "state": state.state,
        "clusterQueue": state.cluster_queue,
        "flavors": {item.name: dict(item.flavors) for item in state.admission} if admitted else {},
        "evictions": state.evictions,
        "message": state.message,
    }
    placed = {
        item.name: {
            "levels": list(item.topology_assignment.levels),
            "domains": [
                {"values": list(domain.values), "count": domain.count}
                for domain in item.topology_assignment.domains
            ],
        }
        for item in state.admission
        if admitted and item.topology_assignment is not None
    }
    if placed:
        # Only with topology-aware scheduling: where each pod set's pods go
        # (docs/concepts.md#topology-aware-scheduling).
        entry["topology"] = placed
    return entry


def cluster_queue_entry(
    status: ClusterQueueStatusLike, format_quantity: QuantityFormatter
) -> dict[str, Any]:
    """One ``clusterQueues`` entry of the contract: pure."""
    return {
        "pending": status.pending,
        "admitted": status.admitted,
        "usage": {
            flavor: {
                resource: format_quantity(resource, amount)
                for resource, amount in resources.items()
            }
            for flavor, resources in status.usage.items()
        },
    }


def snapshot_json(
    workloads: Sequence[WorkloadStateLike],
    cluster_queues: Sequence[ClusterQueueStatusLike],
    format_quantity: QuantityFormatter,
) -> dict[str, Any]:
    """The documented ``--json`` object, exactly its keys: pure."""
    return {
        "workloads": {state.key: workload_entry(state) for state in workloads},
        "clusterQueues": {
            status.name: cluster_queue_entry(status, format_quantity) for status in cluster_queues
        },
    }


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns separated by two spaces; the last column is not padded: pure."""
    widths = [
        max(len(str(row[index])) for row in [headers, *rows]) for index in range(len(headers))
    ]
    lines = []
    for row in [headers, *rows]:
        cells = [str(cell).ljust(width) for cell, width in zip(row[:-1], widths, strict=False)]
        lines.append("  ".join([*cells, str(row[-1])]).rstrip())
    return lines


def _flavors_text(flavors: Mapping[str, Mapping[str, str]]) -> str:
    if not flavors:
        return "-"
    parts = []
    for pod_set, resources in flavors.items():
        by_flavor: dict[str, list[str]] = {}
        for resource, flavor in resources.items():
            by_flavor.setdefault(flavor, []).append(resource)
        assigned = " ".join(f"{','.join(names)}={flavor}" for flavor, names in by_flavor.items())
        parts.append(f"{pod_set}[{assigned}]")
    return " ".join(parts)


def _usage_text(usage: Mapping[str, Mapping[str, str]]) -> str:
    if not usage:
        return "-"
    return "; ".join(
        f"{flavor}: " + ", ".join(f"{resource}={amount}" for resource, amount in resources.items())
        for flavor, resources in usage.items()
    )


def snapshot_table(
    report: Mapping[str, Any], evictions: Sequence[tuple[str, str, str]] = ()
) -> str:
    """The human form of a ``snapshot_json`` report: two aligned tables: pure.

    ``evictions`` (victim, preemptor, reason), in the order they happened,
    add a third table of who preempted whom and why.
    """
    workload_rows = [
        [
            key,
            entry["state"],
            entry["clusterQueue"] or "-",
            _flavors_text(entry["flavors"]),
            str(entry["evictions"]),
            entry["message"] or "-",
        ]
        for key, entry in report["workloads"].items()
    ]
    queue_rows = [
        [name, str(entry["pending"]), str(entry["admitted"]), _usage_text(entry["usage"])]
        for name, entry in report["clusterQueues"].items()
    ]
    lines = table(
        ["WORKLOAD", "STATE", "CLUSTERQUEUE", "FLAVORS", "EVICTIONS", "MESSAGE"], workload_rows
    )
    lines.append("")
    lines.extend(table(["CLUSTERQUEUE", "PENDING", "ADMITTED", "USAGE"], queue_rows))
    if evictions:
        lines.append("")
        lines.extend(table(["EVICTED", "PREEMPTED BY", "REASON"], [list(row) for row in evictions]))
    return "\n".join(lines) + "\n"
