"""``kuota status``: every ClusterQueue of a live cluster, its quota use at a glance.

For each ClusterQueue: pending and admitted Workloads, and one usage bar per
flavor and resource of its quota (used / nominal quota, with what is borrowed
beyond it), then the LocalQueues that feed it.  Then every MultiKueue worker
cluster (``Connected`` or why not), when there are any.  The figures come from the
scheduling engine holding the cluster's objects (``scheduler.cli.live``):
usage is the sum of the admitted Workloads' ``status.admission``, so it is
the truth the scheduler itself acts on, whether or not a status write has
landed yet.  Nothing here changes the cluster.

The renderers are pure functions of small records (``QueueSummary``), built
from raw dicts by ``summarize``, so both are unit-tested without a cluster.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TextIO

from scheduler.api import objects as raw_objects
from scheduler.api.quantity import Quantity, QuantityError
from scheduler.cli.live import (
    ClusterFetcher,
    ClusterObjects,
    add_connection_arguments,
    fetch,
    key_of,
    new_live_engine,
    utc_now,
)
from scheduler.core.resources import format_quantity, to_int

BAR_WIDTH = 20
EXIT_OK, EXIT_UNREACHABLE = 0, 1


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One flavor and resource of a ClusterQueue's quota."""

    flavor: str
    resource: str
    used: Quantity
    nominal: Quantity


@dataclass(frozen=True, slots=True)
class QueueSummary:
    name: str
    cohort: str | None
    pending: int
    admitted: int
    active: bool
    inactive_message: str
    rows: tuple[UsageRow, ...]
    local_queues: tuple[str, ...]
    """``namespace/name`` of every LocalQueue pointing at this ClusterQueue."""
    reserving: int = -1
    """Workloads holding quota, admitted or waiting for admission checks (-1: as admitted)."""
    checks: tuple[tuple[str, str], ...] = ()
    """(name, state text) of every admission check the ClusterQueue lists."""


def bar(used: int, quota: int, width: int = BAR_WIDTH) -> str:
    """``[#####.....]``: the share of ``quota`` in use, rounded to the nearest cell: pure.

    Use beyond the quota (borrowing) fills the bar and adds a ``+``; a zero
    quota with no use is an empty bar, with use a full one.
    """
    if quota <= 0:
        filled = width if used > 0 else 0
    else:
        filled = min(width, (2 * used * width + quota) // (2 * quota))
        if used > 0 and filled == 0:
            filled = 1  # any use shows
    cells = "#" * filled + "." * (width - filled)
    return f"[{cells}]" + ("+" if used > quota else "")


def _quantity(text: object) -> Quantity:
    try:
        return Quantity.parse(text if isinstance(text, (str, int)) else "0")
    except QuantityError:
        return Quantity.zero()


def quota_rows(
    cluster_queue: Mapping[str, Any], usage: Mapping[str, Mapping[str, Quantity]]
) -> tuple[UsageRow, ...]:
    """One row per flavor and resource, in the order of the ClusterQueue's spec: pure."""
    rows = []
    for group in raw_objects.spec(cluster_queue).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            name = str(flavor.get("name"))
            for resource in flavor.get("resources") or []:
                resource_name = str(resource.get("name"))
                used = (usage.get(name) or {}).get(resource_name, Quantity.zero())
                rows.append(
                    UsageRow(name, resource_name, used, _quantity(resource.get("nominalQuota")))
                )
    return tuple(rows)


def summarize(
    objects: ClusterObjects, now: datetime, notes: list[str] | None = None
) -> list[QueueSummary]:
    """Every ClusterQueue of the picture, by name, with the engine's counts and usage: pure."""
    notes = notes if notes is not None else []
    engine, _, _ = new_live_engine(objects, now, notes)
    local_queues: dict[str, list[str]] = {}
    for local_queue in objects.local_queues:
        target = str(raw_objects.spec(local_queue).get("clusterQueue") or "")
        local_queues.setdefault(target, []).append(key_of(local_queue))
    checks = {raw_objects.name(check): check for check in objects.admission_checks}
    summaries = []
    for raw in sorted(objects.cluster_queues, key=raw_objects.name):
        name = raw_objects.name(raw)
        try:
            status = engine.view.cluster_queue_status(name)
        except KeyError:
            continue  # left out with a note by the loader
        summaries.append(
            QueueSummary(
                name=name,
                cohort=raw_objects.spec(raw).get("cohortName") or None,
                pending=status.pending,
                admitted=status.admitted,
                active=status.active,
                inactive_message=status.active_message,
                rows=quota_rows(raw, status.usage),
                local_queues=tuple(sorted(local_queues.get(name, ()))),
                reserving=status.reserving,
                checks=tuple(
                    (check, check_state(checks.get(check))) for check in _check_names(raw)
                ),
            )
        )
    return summaries


def _check_names(cluster_queue: Mapping[str, Any]) -> list[str]:
    strategy = raw_objects.spec(cluster_queue).get("admissionChecksStrategy") or {}
    rules = strategy.get("admissionChecks") if isinstance(strategy, Mapping) else None
    names = [str(rule.get("name")) for rule in rules or [] if isinstance(rule, Mapping)]
    return list(dict.fromkeys(names))


def check_state(check: Mapping[str, Any] | None) -> str:
    """How an AdmissionCheck stands: its controller and ``Active`` condition: pure."""
    if check is None:
        return "missing"
    controller = raw_objects.spec(check).get("controllerName") or "?"
    active = raw_objects.condition(check, "Active")
    if active is None:
        return f"{controller}, not reported Active by its controller"
    if active.get("status") == "True":
        return f"{controller}, Active"
    return f"{controller}, inactive ({active.get('reason')}): {active.get('message')}"


def _percent(used: int, quota: int) -> str:
    if quota <= 0:
        return "-" if used == 0 else "over"
    return f"{used * 100 // quota}%"


def render_queue(summary: QueueSummary) -> list[str]:
    """The lines of one ClusterQueue: a header, then its usage bars: pure."""
    header = f"ClusterQueue {summary.name}  pending {summary.pending}  admitted {summary.admitted}"
    if summary.reserving > summary.admitted:
        header += f"  waiting for admission checks {summary.reserving - summary.admitted}"
    if summary.cohort:
        header += f"  cohort {summary.cohort}"
    lines = [header]
    if not summary.active:
        lines.append(f"  inactive: {summary.inactive_message}")
    for name, state in summary.checks:
        lines.append(f"  admission check {name}: {state}")
    flavor_width = max([len("FLAVOR"), *(len(row.flavor) for row in summary.rows)])
    resource_width = max([len("RESOURCE"), *(len(row.resource) for row in summary.rows)])
    if summary.rows:
        lines.append(
            f"  {'FLAVOR'.ljust(flavor_width)}  {'RESOURCE'.ljust(resource_width)}  "
            f"{'USAGE'.ljust(BAR_WIDTH + 5)}USED/QUOTA"
        )
    for row in summary.rows:
        used, quota = to_int(row.resource, row.used), to_int(row.resource, row.nominal)
        used_text = format_quantity(row.resource, row.used)
        quota_text = format_quantity(row.resource, row.nominal)
        amounts = f"{used_text}/{quota_text} ({_percent(used, quota)})"
        if used > quota:
            amounts += f", borrowing {format_quantity(row.resource, row.used - row.nominal)}"
        lines.append(
            f"  {row.flavor.ljust(flavor_width)}  {row.resource.ljust(resource_width)}  "
            f"{bar(used, quota).ljust(BAR_WIDTH + 5)}{amounts}"
        )
    if summary.local_queues:
        lines.append(f"  LocalQueues: {', '.join(summary.local_queues)}")
    return lines


def render_status(summaries: Sequence[QueueSummary]) -> str:
    """The whole ``kuota status`` report: pure."""
    if not summaries:
        return "No ClusterQueues.\n"
    blocks = ["\n".join(render_queue(summary)) for summary in summaries]
    return "\n\n".join(blocks) + "\n"


def _active(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(True|False|Unknown, message)`` of an object's ``Active`` condition: pure."""
    condition = raw_objects.condition(obj, "Active")
    if condition is None:
        return "Unknown", "no status yet (is its controller running?)"
    return str(condition.get("status", "Unknown")), str(condition.get("message", ""))


def render_workers(objects: ClusterObjects) -> str:
    """The MultiKueue worker clusters, one line each (none: ``""``): pure."""
    if not objects.multikueue_clusters:
        return ""
    lines = ["MultiKueue worker clusters"]
    for cluster in sorted(objects.multikueue_clusters, key=raw_objects.name):
        status, message = _active(cluster)
        lines.append(f"  {raw_objects.name(cluster)}  connected {status}: {message}")
    return "\n".join(lines) + "\n"


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "status",
        help="every ClusterQueue of the cluster: usage per flavor and resource, pending and "
        "admitted",
        description="Read the cluster through your kubeconfig and show every ClusterQueue: a usage "
        "bar per flavor and resource (used/nominal quota), pending and admitted Workloads, and "
        "the LocalQueues that feed it. Read-only.",
    )
    add_connection_arguments(parser, namespaced=False)
    parser.set_defaults(run=run)


def run(
    args: argparse.Namespace,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    fetcher: ClusterFetcher | None = None,
) -> int:
    objects, _ = fetch(args, stderr, fetcher)
    if objects is None:
        return EXIT_UNREACHABLE
    notes: list[str] = []
    summaries = summarize(objects, utc_now(), notes)
    for note in notes:
        print(f"note: {note}", file=stderr)
    stdout.write(render_status(summaries))
    extra = render_workers(objects)
    if extra:
        stdout.write("\n" + extra)
    return EXIT_OK
