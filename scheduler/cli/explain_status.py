"""What ``kuota explain`` reads from a Workload's status: its topology placement, its
pods-ready and execution-time clocks, its requeue backoff and its admission checks: pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from scheduler.api import objects as raw_objects
from scheduler.api.config import WaitForPodsReady
from scheduler.api.pods_ready import recovery_timeout
from scheduler.api.refs import PODS_READY
from scheduler.api.topology_assignment import TopologyAssignment
from scheduler.cli.listing import admission
from scheduler.cli.live import condition, parse_time
from scheduler.status.pods_ready import (
    PODS_READY_TIMEOUT,
    WAIT_FOR_RECOVERY,
    accumulated_seconds,
    pods_ready_deadline,
    remaining_execution,
    requeue_count,
)

SHOWN_DOMAINS = 8


def placement_lines(workload: Mapping[str, Any]) -> list[str]:
    """Where topology-aware scheduling put each pod set: ``main: 3 pods on n1, 1 on n2``: pure.

    See docs/concepts.md#topology-aware-scheduling; a malformed assignment says so.
    """
    lines: list[str] = []
    for item in admission(workload).get("podSetAssignments") or []:
        if not isinstance(item, Mapping) or not isinstance(item.get("topologyAssignment"), Mapping):
            continue
        try:
            placed = TopologyAssignment.decoded(item["topologyAssignment"])
        except ValueError as bad:
            lines.append(f"Topology of {item.get('name')}: unreadable ({bad})")
            continue
        pods = sum(domain.count for domain in placed.domains)
        domains = [
            f"{domain.count} on {'/'.join(domain.values)}"
            for domain in placed.domains[:SHOWN_DOMAINS]
        ]
        more = len(placed.domains) - SHOWN_DOMAINS
        tail = f", and {more} more domains" if more > 0 else ""
        lines.append(
            f"Placed by topology: pod set {item.get('name')}, {pods} pods: "
            f"{', '.join(domains)}{tail}"
        )
    return lines


def go_duration(value: timedelta) -> str:
    """A duration as Kueue prints it (Go's ``5m0s``, ``1h0m0s``, ``45s``): pure."""
    total = int(value.total_seconds())
    hours, rest = divmod(max(0, total), 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{seconds}s"
    if minutes:
        return f"{minutes}m{seconds}s"
    return f"{seconds}s"


def _in(moment: datetime, now: datetime) -> str:
    return go_duration(max(timedelta(0), moment - now))


def _tries(workload: Mapping[str, Any], settings: WaitForPodsReady | None) -> str:
    """``try N of M``: the admission the next one is (count + 1), of the limit + 1: pure."""
    attempt = requeue_count(workload) + 1
    limit = settings.requeuing_strategy.backoff_limit_count if settings is not None else None
    return f"try {attempt} of {limit + 1}" if limit is not None else f"try {attempt}"


def timer_lines(
    workload: Mapping[str, Any], settings: WaitForPodsReady | None, now: datetime
) -> list[str]:
    """An admitted Workload's clocks: its pods' readiness and its maximum execution time.

    docs/concepts.md#pods-ready, docs/concepts.md#maximum-execution-time: pure.
    """
    lines = []
    ready = condition(workload, PODS_READY)
    if settings is not None and ready is not None and ready.get("status") == "True":
        lines.append(f"Its pods are ready ({ready.get('reason')}).")
    due = pods_ready_deadline(workload, settings)
    if due is not None and settings is not None:
        cause, when = due
        if cause == WAIT_FOR_RECOVERY:
            allowed = recovery_timeout(settings) or timedelta(0)
            lines.append(
                f"A pod stopped being ready: evicted unless its pods are ready again within "
                f"{go_duration(allowed)}, in {_in(when, now)} (waitForPodsReady)."
            )
        else:
            lines.append(
                f"Its pods are not ready yet: evicted unless they are within "
                f"{go_duration(settings.timeout)}, in {_in(when, now)} (waitForPodsReady, "
                f"{_tries(workload, settings).replace('try', 'admission')})."
            )
    left = remaining_execution(workload, now)
    if left is not None:
        limit = raw_objects.spec(workload).get("maximumExecutionTimeSeconds")
        before = accumulated_seconds(workload)
        earlier = f", {before}s of it in earlier admissions" if before else ""
        lines.append(
            f"Maximum execution time {limit}s: {go_duration(left)} left{earlier}; "
            "then it is deactivated."
        )
    return lines


def backoff_lines(
    workload: Mapping[str, Any], settings: WaitForPodsReady | None, now: datetime
) -> list[str]:
    """A Workload evicted for its pods' readiness: the timeout, the backoff, the tries: pure."""
    evicted = condition(workload, "Evicted") or {}
    if evicted.get("status") != "True" or evicted.get("reason") != PODS_READY_TIMEOUT:
        return []
    state = raw_objects.status(workload).get("requeueState") or {}
    until = parse_time(state.get("requeueAt")) if isinstance(state, Mapping) else None
    within = f" within {go_duration(settings.timeout)}" if settings is not None else ""
    text = f"evicted: pods not ready{within}"
    if until is not None and until > now:
        text += f"; requeued in {_in(until, now)}, {_tries(workload, settings)}"
    else:
        text += f"; requeued, {_tries(workload, settings)}"
    return [text]


def check_lines(workload: Mapping[str, Any]) -> list[str]:
    """One line per admission check that is not Ready yet, with its state and message: pure."""
    entries = (workload.get("status") or {}).get("admissionChecks") or []
    lines: list[str] = []
    for entry in sorted(entries, key=lambda e: str(e.get("name"))):
        state = str(entry.get("state") or "Pending")
        if state == "Ready":
            continue
        message = str(entry.get("message") or "")
        detail = f"{state}, {message}" if message else state
        lines.append(f"It is waiting for admission check {entry.get('name')} ({detail}).")
    if entries and not lines:
        lines.append("Every admission check is Ready: it is admitted next.")
    return lines
