"""``kuota list workloads``: the Workloads of a live cluster as a table.

One row per Workload: namespace, name, LocalQueue, ClusterQueue, state,
flavors, age, and the message of its pending condition: what ``kubectl get
workloads`` would show if it knew what matters.  The row is read from the
Workload's own status, as the scheduler wrote it (this is what the cluster
says, not a prediction; ``kuota explain`` gives the prediction).

States, first match wins: ``Finished``; ``Inactive`` (``spec.active: false``);
``Evicted`` (an ``Evicted`` condition that is True while quota is still
held); ``Admitted``; ``QuotaReserved`` (quota held, admission checks not yet
all Ready); ``Pending``.  The ClusterQueue of a Workload without an admission
is the one its LocalQueue points to.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, TextIO

from scheduler.api import objects as raw_objects
from scheduler.api.refs import ADMITTED, EVICTED, FINISHED, QUOTA_RESERVED
from scheduler.cli.live import (
    ClusterFetcher,
    ClusterObjects,
    add_connection_arguments,
    age,
    chosen_namespace,
    condition,
    fetch,
    is_true,
    utc_now,
)
from scheduler.cli.render import table

EXIT_OK, EXIT_UNREACHABLE = 0, 1
HEADERS = ["NAMESPACE", "NAME", "QUEUE", "CLUSTERQUEUE", "STATE", "FLAVORS", "AGE", "MESSAGE"]


def workload_state(workload: Mapping[str, Any]) -> str:
    """The state of a Workload from its status (see the module docstring): pure."""
    if is_true(workload, FINISHED):
        return "Finished"
    if raw_objects.is_deactivated(workload):
        return "Inactive"
    reserved = is_true(workload, QUOTA_RESERVED)
    if reserved and is_true(workload, EVICTED):
        return "Evicted"
    if is_true(workload, ADMITTED):
        return "Admitted"
    if reserved:
        return "QuotaReserved"
    return "Pending"


def admission(workload: Mapping[str, Any]) -> Mapping[str, Any]:
    """``status.admission`` or an empty mapping: pure."""
    return raw_objects.admission(workload) or {}


def flavors_text(workload: Mapping[str, Any]) -> str:
    """``main[cpu,memory=ondemand]`` per pod set of the admission, ``-`` without one: pure."""
    parts = []
    for assignment in raw_objects.pod_set_assignments(workload):
        by_flavor: dict[str, list[str]] = {}
        for resource, flavor in (assignment.get("flavors") or {}).items():
            by_flavor.setdefault(str(flavor), []).append(str(resource))
        assigned = " ".join(
            f"{','.join(resources)}={flavor}" for flavor, resources in by_flavor.items()
        )
        parts.append(f"{assignment.get('name')}[{assigned}]")
    return " ".join(parts) or "-"


def pending_message(workload: Mapping[str, Any], state: str) -> str:
    """The message a user wants next to the state: why it waits, or why it was evicted: pure."""
    if state == "Pending":
        reserved = condition(workload, QUOTA_RESERVED)
        if reserved is not None and reserved.get("message"):
            return str(reserved["message"])
        return "-"
    if state == "Evicted":
        evicted = condition(workload, EVICTED)
        return str((evicted or {}).get("message") or "-")
    if state == "Inactive":
        return "spec.active is false"
    return "-"


def workload_rows(objects: ClusterObjects, namespace: str | None, now: datetime) -> list[list[str]]:
    """The table rows for ``namespace`` (None: all), sorted by namespace then name: pure."""
    routes = {
        (raw_objects.namespace(lq), raw_objects.name(lq)): str(
            raw_objects.spec(lq).get("clusterQueue") or ""
        )
        for lq in objects.local_queues
    }
    rows = []
    for workload in objects.workloads:
        workload_namespace = raw_objects.namespace(workload)
        if namespace is not None and workload_namespace != namespace:
            continue
        state = workload_state(workload)
        queue = raw_objects.workload_queue_name(workload)
        cluster_queue = (
            raw_objects.admitted_cluster_queue(workload)
            or routes.get((workload_namespace, queue))
            or "-"
        )
        rows.append(
            [
                workload_namespace or "",
                raw_objects.name(workload),
                queue or "-",
                str(cluster_queue),
                state,
                flavors_text(workload),
                age(raw_objects.creation_time(workload), now),
                pending_message(workload, state),
            ]
        )
    return sorted(rows, key=lambda row: (row[0], row[1]))


def render_workloads(
    rows: Sequence[Sequence[str]], *, all_namespaces: bool, namespace: str | None
) -> str:
    """The table (without the NAMESPACE column for one namespace), or a one-line "nothing": pure."""
    if not rows:
        where = "in any namespace" if all_namespaces else f"in namespace {namespace}"
        return f"No Workloads {where}.\n"
    if all_namespaces:
        return "\n".join(table(HEADERS, rows)) + "\n"
    return "\n".join(table(HEADERS[1:], [row[1:] for row in rows])) + "\n"


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "list",
        help="list kuota objects of the cluster (workloads)",
        description="Read-only listings of a live cluster.",
    )
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    workloads = kinds.add_parser(
        "workloads",
        aliases=["workload", "wl"],
        help="Workloads: queue, ClusterQueue, state, flavors, age, why pending",
        description="Every Workload of the namespace (or of all with -A): its LocalQueue and "
        "ClusterQueue, state, assigned flavors, age, and the message saying why it is pending.",
    )
    add_connection_arguments(workloads, namespaced=True)
    workloads.set_defaults(run=run)


def run(
    args: argparse.Namespace,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    fetcher: ClusterFetcher | None = None,
) -> int:
    objects, kubeconfig = fetch(args, stderr, fetcher)
    if objects is None:
        return EXIT_UNREACHABLE
    namespace = chosen_namespace(args, kubeconfig)
    rows = workload_rows(objects, namespace, utc_now())
    stdout.write(render_workloads(rows, all_namespaces=namespace is None, namespace=namespace))
    return EXIT_OK
