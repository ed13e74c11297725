"""``kuota simulate --timeline TRACE FILE...``: capacity planning in virtual time.

The files give the queues (flavors, ClusterQueues, cohorts, LocalQueues, the
Configuration; Workloads in them are background load that never finishes).
The trace (``scheduler.cli.trace``) gives jobs with submit times and run
times.  Events are submissions and completions; after each batch of events
at one instant the engine cycles at that instant until a cycle admits and
evicts nothing, as the live scheduler's loop would.  An admitted job
completes ``duration`` seconds later (``engine.finish``); a job evicted
before that loses its run and starts over when admitted again.  A job with
``maxExecutionSeconds`` is deactivated (its quota released, never admitted
again) once its admitted time, summed over its admissions, reaches it
before it completes, as the live scheduler does
(docs/concepts.md#maximum-execution-time).  There are no pods: every
admitted job counts as PodsReady at once, so waitForPodsReady changes
nothing here.

Reported: per LocalQueue the waits (admission - submission of the admission
that ran to completion) at p50/p90/p99 by nearest rank and their maximum;
per flavor and resource the utilisation, time-weighted usage divided by the
total nominal quota (ClusterQueues and Cohorts) over [first submission,
makespan end]; the makespan (last completion - first submission).  Exit 1
when the event or cycle bound is hit, 2 on unreadable input.
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import importlib.util
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TextIO

from scheduler.cli.cluster import SIMULATION_EPOCH, Cluster
from scheduler.cli.render import table
from scheduler.cli.trace import TraceError, TraceJob, parse_trace

PERCENTILES = (50, 90, 99)
PLOT_EXTRA_MESSAGE = (
    "error: --plot needs matplotlib, which is not installed; "
    "install the optional extra: pip install 'kuota[plot]'"
)
FlavorResource = tuple[str, str]


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of ``values`` (non-empty): the ceil(p/100·n)-th smallest: pure."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def trace_workload(job: TraceJob) -> dict[str, Any]:
    """The raw v1beta2 Workload a trace job stands for: pure."""
    pod_spec: dict[str, Any] = {
        "containers": [{"name": "main", "resources": {"requests": dict(job.requests)}}]
    }
    if job.tolerations:
        pod_spec["tolerations"] = [dict(item) for item in job.tolerations]
    if job.node_selector:
        pod_spec["nodeSelector"] = dict(job.node_selector)
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": job.name, "namespace": job.namespace},
        "spec": {
            "queueName": job.queue,
            "priority": job.priority,
            "podSets": [{"name": "main", "count": job.count, "template": {"spec": pod_spec}}],
            **(
                {"maximumExecutionTimeSeconds": job.max_execution_seconds}
                if job.max_execution_seconds
                else {}
            ),
        },
    }


def _moment(seconds: float) -> datetime:
    return SIMULATION_EPOCH + timedelta(seconds=seconds)


@dataclass
class Sample:
    time: float
    usage: dict[FlavorResource, int]
    pending: int


@dataclass
class Outcome:
    """What happened to every job, plus the usage over time."""

    admitted_at: dict[str, float] = field(default_factory=dict)
    completed_at: dict[str, float] = field(default_factory=dict)
    evictions: dict[str, int] = field(default_factory=dict)
    deactivated_at: dict[str, float] = field(default_factory=dict)
    """Jobs deactivated by their maximum execution time."""
    samples: list[Sample] = field(default_factory=list)
    bounded: bool = False


def nominal_quota(cluster: Cluster) -> dict[FlavorResource, int]:
    """Total nominal quota per (flavor, resource) over ClusterQueues and Cohorts, as
    engine integers.
    """
    from scheduler.core.resources import to_int

    totals: dict[FlavorResource, int] = {}
    for item in cluster.objects:
        if getattr(item, "kind", None) not in ("ClusterQueue", "Cohort"):
            continue
        for group in item.spec.resource_groups:
            for flavor in group.flavors:
                for quota in flavor.resources:
                    if quota.nominal_quota is not None:
                        key = (str(flavor.name), str(quota.name))
                        totals[key] = totals.get(key, 0) + to_int(quota.name, quota.nominal_quota)
    return totals


def _sample(engine: Any, now: float) -> Sample:
    from scheduler.core.resources import to_int

    usage: dict[FlavorResource, int] = {}
    pending = 0
    for name in engine.view.cluster_queue_names():
        status = engine.view.cluster_queue_status(name)
        pending += status.pending
        for flavor, resources in status.usage.items():
            for resource, amount in resources.items():
                usage[(flavor, resource)] = usage.get((flavor, resource), 0) + to_int(
                    resource, amount
                )
    return Sample(now, usage, pending)


def trace_workloads(jobs: Sequence[TraceJob], source: str) -> dict[str, Any]:
    """Each job's parsed Workload by key, checked like ``kuota validate``: pure.

    Raises TraceError.
    """
    from scheduler.api.parse import ObjectParseError, parse_object
    from scheduler.api.pipeline import review

    workloads = {}
    for job in jobs:
        checked = review(trace_workload(job), operation="CREATE")
        try:
            if checked.errors or checked.stored is None:
                raise ObjectParseError(list(checked.errors))
            workloads[f"{job.namespace}/{job.name}"] = parse_object(checked.stored)
        except ObjectParseError as failure:
            problems = "; ".join(error.render() for error in failure.errors)
            raise TraceError(f"{source}:{job.line}: Workload/{job.name}: {problems}") from failure
    return workloads


def replay(
    engine: Any,
    jobs: Sequence[TraceJob],
    workloads: Mapping[str, Any],
    *,
    max_events: int,
    max_cycles: int,
) -> Outcome:
    """Drive ``engine`` through the trace in virtual time (module docstring)."""
    from scheduler.core.decisions import Admit, Evict

    outcome = Outcome()
    by_key = {f"{job.namespace}/{job.name}": job for job in jobs}
    run_token: dict[str, int] = {}
    events: list[
        tuple[float, int, int, str]
    ] = []  # (time, 0 completion | 1 submission, order, key)
    for order, job in enumerate(jobs):
        heapq.heappush(events, (job.submit, 1, order, f"{job.namespace}/{job.name}"))
    sequence = len(jobs)
    batches = 0
    applied: dict[str, Any] = {}
    ran: dict[str, float] = {}
    """Seconds admitted in earlier admissions (``accumulatedPastExecutionTimeSeconds``)."""
    deadlines: set[int] = set()
    """Run tokens whose event is the maximum execution time, not the completion."""
    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, kind, order, key = heapq.heappop(events)
            if kind == 1:
                workload = workloads[key]
                created = _moment(now) + timedelta(microseconds=order)
                workload = dataclasses.replace(
                    workload,
                    metadata=dataclasses.replace(workload.metadata, creation_timestamp=created),
                )
                applied[key] = workload
                engine.apply(workload)
            elif run_token.get(key) == order and order in deadlines:
                # Its maximum execution time: deactivated, its quota released.
                run_token.pop(key)
                spec = dataclasses.replace(applied[key].spec, active=False)
                engine.apply(dataclasses.replace(applied[key], spec=spec))
                outcome.deactivated_at[key] = now
            elif run_token.get(key) == order:
                engine.finish(key)
                outcome.completed_at[key] = now
        for _ in range(max_cycles):
            result = engine.cycle(_moment(now))
            for decision in result.decisions:
                if isinstance(decision, Admit) and decision.workload in by_key:
                    outcome.admitted_at[decision.workload] = now
                    sequence += 1
                    run_token[decision.workload] = sequence
                    job = by_key[decision.workload]
                    runs_for = job.duration
                    limit = job.max_execution_seconds
                    if limit is not None and limit - ran.get(decision.workload, 0.0) < runs_for:
                        runs_for = max(0.0, limit - ran.get(decision.workload, 0.0))
                        deadlines.add(sequence)
                    heapq.heappush(events, (now + runs_for, 0, sequence, decision.workload))
                elif isinstance(decision, Evict):
                    engine.release(
                        decision.victim
                    )  # a replay has no pods: the victim is gone at once
                    if decision.victim in outcome.admitted_at and decision.victim in run_token:
                        since = outcome.admitted_at[decision.victim]
                        ran[decision.victim] = ran.get(decision.victim, 0.0) + now - since
                    run_token.pop(decision.victim, None)
                    outcome.admitted_at.pop(decision.victim, None)
                    outcome.evictions[decision.victim] = (
                        outcome.evictions.get(decision.victim, 0) + 1
                    )
            if result.admitted == 0 and result.evicted == 0:
                break
        else:
            outcome.bounded = True
        outcome.samples.append(_sample(engine, now))
        batches += 1
        if outcome.bounded or batches >= max_events and events:
            outcome.bounded = True
            break
    return outcome


def report(
    jobs: Sequence[TraceJob], outcome: Outcome, quota: Mapping[FlavorResource, int]
) -> dict[str, Any]:
    """The timeline report (``--json`` shape): pure."""
    queues: dict[str, dict[str, Any]] = {}
    for job in jobs:
        entry = queues.setdefault(
            job.queue_key, {"jobs": 0, "admitted": 0, "completed": 0, "waits": []}
        )
        key = f"{job.namespace}/{job.name}"
        entry["jobs"] += 1
        if key in outcome.admitted_at:
            entry["admitted"] += 1
            entry["waits"].append(outcome.admitted_at[key] - job.submit)
        if key in outcome.completed_at:
            entry["completed"] += 1
    for entry in queues.values():
        waits = entry.pop("waits")
        entry["waitSeconds"] = (
            {**{f"p{p}": percentile(waits, p) for p in PERCENTILES}, "max": max(waits)}
            if waits
            else None
        )
    start = min((job.submit for job in jobs), default=0.0)
    end = max(outcome.completed_at.values(), default=start)
    return {
        "queues": dict(sorted(queues.items())),
        "utilisation": utilisation(outcome.samples, quota, start, end),
        "makespanSeconds": end - start,
        "jobs": {
            "submitted": len(jobs),
            "admitted": len(outcome.admitted_at),
            "completed": len(outcome.completed_at),
            "neverAdmitted": len(jobs) - len(outcome.admitted_at),
            "evictions": sum(outcome.evictions.values()),
            "deactivated": len(outcome.deactivated_at),
        },
    }


def utilisation(
    samples: Sequence[Sample], quota: Mapping[FlavorResource, int], start: float, end: float
) -> dict[str, dict[str, float]]:
    """Time-weighted usage / quota per flavor and resource over [start, end]: pure.

    Usage is piecewise constant: each sample holds until the next one.
    """
    result: dict[str, dict[str, float]] = {}
    span = end - start
    for (flavor, resource), total in sorted(quota.items()):
        if total <= 0:
            continue
        area = 0.0
        for index, sample in enumerate(samples):
            until = samples[index + 1].time if index + 1 < len(samples) else end
            low, high = max(sample.time, start), min(until, end)
            if high > low:
                area += sample.usage.get((flavor, resource), 0) * (high - low)
        result.setdefault(flavor, {})[resource] = (
            round(area / (total * span), 4) if span > 0 else 0.0
        )
    return result


def render_table(summary: Mapping[str, Any]) -> str:
    """The human form of the timeline report: pure."""

    def seconds(value: float | None) -> str:
        return "-" if value is None else f"{value:g}"

    rows = []
    for name, entry in summary["queues"].items():
        waits = entry["waitSeconds"] or {}
        rows.append(
            [
                name,
                str(entry["jobs"]),
                str(entry["admitted"]),
                str(entry["completed"]),
                *(seconds(waits.get(key)) for key in ("p50", "p90", "p99", "max")),
            ]
        )
    lines = table(["QUEUE", "JOBS", "ADMITTED", "COMPLETED", "WAIT P50", "P90", "P99", "MAX"], rows)
    lines.append("")
    usage_rows = [
        [flavor, resource, f"{share * 100:.1f}%"]
        for flavor, resources in summary["utilisation"].items()
        for resource, share in resources.items()
    ]
    lines.extend(table(["FLAVOR", "RESOURCE", "UTILISATION"], usage_rows))
    lines.append("")
    jobs = summary["jobs"]
    lines.append(
        f"makespan: {seconds(summary['makespanSeconds'])} s; jobs: {jobs['submitted']} submitted, "
        f"{jobs['completed']} completed, {jobs['neverAdmitted']} never admitted, "
        f"{jobs['evictions']} eviction(s)"
        + (
            f", {jobs['deactivated']} deactivated (maximum execution time)"
            if jobs.get("deactivated")
            else ""
        )
    )
    return "\n".join(lines) + "\n"


def plot(path: str, samples: Sequence[Sample], quota: Mapping[FlavorResource, int]) -> None:
    """Draw utilisation and queue length over time into ``path`` (matplotlib required)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    figure, (top, bottom) = pyplot.subplots(2, 1, sharex=True, figsize=(9, 6))
    times = [sample.time for sample in samples]
    for key, total in sorted(quota.items()):
        if total > 0:
            top.step(
                times,
                [sample.usage.get(key, 0) / total for sample in samples],
                where="post",
                label=f"{key[0]}/{key[1]}",
            )
    top.set_ylabel("utilisation")
    top.legend(loc="upper right", fontsize="small")
    bottom.step(times, [sample.pending for sample in samples], where="post")
    bottom.set_ylabel("pending workloads")
    bottom.set_xlabel("seconds")
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    from scheduler.cli.simulate import (
        EXIT_INVALID,
        EXIT_NOT_STEADY,
        EXIT_STEADY,
        _load_cluster,
        new_engine,
    )

    if args.plot and importlib.util.find_spec("matplotlib") is None:
        print(PLOT_EXTRA_MESSAGE, file=stderr)
        return EXIT_INVALID
    try:
        with open(args.timeline, encoding="utf-8") as handle:
            jobs = parse_trace(handle.read(), args.timeline)
        workloads = trace_workloads(jobs, args.timeline)
    except OSError as failure:
        print(f"error: {args.timeline}: cannot read: {failure.strerror or failure}", file=stderr)
        return EXIT_INVALID
    except TraceError as failure:
        print(f"error: {failure}", file=stderr)
        return EXIT_INVALID
    cluster = _load_cluster(args.files, stdin, stderr)
    if cluster is None:
        return EXIT_INVALID
    engine = new_engine(cluster)
    outcome = replay(
        engine, jobs, workloads, max_events=args.max_events, max_cycles=args.max_cycles
    )
    quota = nominal_quota(cluster)
    summary = report(jobs, outcome, quota)
    if args.json:
        json.dump(summary, stdout, indent=2)
        stdout.write("\n")
    else:
        stdout.write(render_table(summary))
    if args.plot:
        plot(args.plot, outcome.samples, quota)
    if outcome.bounded:
        print(
            "error: the replay hit its bound (--max-events / --max-cycles) before the trace ended",
            file=stderr,
        )
        return EXIT_NOT_STEADY
    return EXIT_STEADY
