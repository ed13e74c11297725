"""``kuota simulate FILE... [--json]``: the scheduler engine, offline.

See docs/validation.md#kuota-simulate.

Snapshot mode loads the objects in file order as if applied to an empty
cluster (``scheduler.cli.cluster``), runs the real engine
(``scheduler.core.Engine``) until a full pass admits and evicts nothing, and
reports every workload and ClusterQueue.  Exit 0: steady state reached;
1: the cycle bound was hit first (said on stderr); 2: unreadable or invalid
input (the ``validate`` messages).

Timeline mode (``--timeline TRACE``) replays a trace of job submissions in
virtual time against the queues of the files (``scheduler.cli.timeline``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any, TextIO

from scheduler.cli.cluster import Cluster, InvalidInput, build_cluster
from scheduler.cli.loader import InputError, load
from scheduler.cli.render import snapshot_json, snapshot_table

EXIT_STEADY, EXIT_NOT_STEADY, EXIT_INVALID = 0, 1, 2
DEFAULT_MAX_CYCLES = 10_000

TIMELINE_HELP = """\
timeline mode (capacity planning):
  kuota simulate --timeline TRACE QUEUE_FILE... [--json] [--plot FILE.png]

  TRACE is a CSV file with a header row, or JSON lines (.jsonl/.ndjson, or any
  file whose first non-blank character is '{'), one job per row:
    submit        seconds from the start of the trace (required)
    requests      per-pod requests, e.g. cpu=2,memory=4Gi (required)
    count         pods of the job (default 1)
    duration      seconds the job runs once admitted (required)
    queue         namespace/localqueue (required)
    priority      integer (default 0)
    name          job name (default job-<row>)
    tolerations   key=value:Effect, key:Effect or key, ';'-separated
    nodeSelector  key=value, ';'-separated
  In JSON lines, requests/nodeSelector may be objects and tolerations a list
  of Kubernetes tolerations.  The engine runs in virtual time: at each
  submission or completion it cycles until nothing more is admitted.  The
  report gives per-LocalQueue wait percentiles (p50, p90, p99 nearest-rank,
  and max, over admitted jobs), utilisation per flavor and resource
  (time-weighted usage / total nominal quota, from the first submission to
  the makespan) and the makespan (last completion - first submission).
  --plot draws utilisation and queue length over time (needs the optional
  extra kuota[plot], i.e. matplotlib).
"""


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "simulate",
        help="run the scheduling engine on manifests, offline",
        description="Load ResourceFlavors, ClusterQueues, Cohorts, LocalQueues, priority classes, "
        "Namespaces, Workloads, batch/v1 Jobs, JobSets and the Configuration in file order, as if "
        "applied to an empty cluster, and run kuota's scheduler engine until nothing "
        "changes. Exit 0: steady state; 1: no steady state within the bound; "
        "2: unreadable or invalid input.",
        epilog=TIMELINE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="YAML file(s); - reads standard input"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print the JSON report (kuota\'s docs/validation.md, "kuota simulate")',
    )
    parser.add_argument(
        "--max-cycles",
        type=int,
        default=DEFAULT_MAX_CYCLES,
        metavar="N",
        help=f"give up after N scheduling cycles (default {DEFAULT_MAX_CYCLES}; "
        "timeline mode: per batch of events)",
    )
    timeline = parser.add_argument_group("timeline mode")
    timeline.add_argument(
        "--timeline",
        metavar="TRACE",
        help="replay a trace of jobs (CSV or JSON lines) in virtual time; FILE... are the queues",
    )
    timeline.add_argument(
        "--plot",
        metavar="FILE.png",
        help="timeline mode: draw utilisation and queue length over time (needs kuota[plot])",
    )
    timeline.add_argument(
        "--max-events",
        type=int,
        default=1_000_000,
        metavar="N",
        help="timeline mode: give up after N event batches (default 1000000)",
    )
    parser.set_defaults(run=run)


def new_engine(
    cluster: Cluster,
    engine_factory: Callable[..., Any] | None = None,
    *,
    pods_observed: bool = False,
) -> Any:
    """An engine holding every object of ``cluster``, applied in file order.

    ``pods_observed``: the Workloads' ``PodsReady`` conditions come from real
    pods (a live cluster); offline there are none and every admitted workload
    counts as ready at once, so waitForPodsReady's ``blockAdmission`` holds
    nothing back (docs/configuration.md#waitforpodsready).
    """
    from scheduler.core.engine import Engine

    if engine_factory is not None:
        engine = engine_factory(cluster.configuration)
    else:
        engine = Engine(cluster.configuration, pods_observed=pods_observed)
    for item in cluster.objects:
        engine.apply(item)
    return engine


def release_victims(engine: Any, result: Any, log: list[Any] | None = None) -> None:
    """A simulation has no pods: every victim of ``result`` is gone at once (``Engine.release``).

    The ``Evict`` decisions are appended to ``log`` when given (the human table lists them).
    """
    from scheduler.core.decisions import Evict

    for decision in result.decisions:
        if isinstance(decision, Evict):
            if log is not None:
                log.append(decision)
            engine.release(decision.victim)


def snapshot(
    cluster: Cluster,
    *,
    max_cycles: int = DEFAULT_MAX_CYCLES,
    engine_factory: Callable[..., Any] | None = None,
) -> tuple[dict[str, Any], bool]:
    """Run the engine to a steady state; (the contract's report, whether it was reached)."""
    report, steady, _ = snapshot_with_evictions(
        cluster, max_cycles=max_cycles, engine_factory=engine_factory
    )
    return report, steady


def snapshot_with_evictions(
    cluster: Cluster,
    *,
    max_cycles: int = DEFAULT_MAX_CYCLES,
    engine_factory: Callable[..., Any] | None = None,
) -> tuple[dict[str, Any], bool, list[Any]]:
    """``snapshot``, plus every ``Evict`` decision of the run in order."""
    from scheduler.core.resources import format_quantity

    engine = new_engine(cluster, engine_factory)
    evictions: list[Any] = []
    _, steady = engine.run_until_steady(
        cluster.start_time,
        max_cycles=max_cycles,
        after_cycle=lambda result: release_victims(engine, result, evictions),
    )
    known = set(engine.view.workload_keys())
    ordered = [key for key in cluster.workload_keys if key in known]
    ordered += sorted(known.difference(ordered))
    states = [engine.view.workload_state(key) for key in ordered]
    queues = [engine.view.cluster_queue_status(name) for name in engine.view.cluster_queue_names()]
    return snapshot_json(states, queues, format_quantity), steady, evictions


def _load_cluster(files: list[str], stdin: TextIO, stderr: TextIO) -> Cluster | None:
    try:
        documents = load(files, stdin)
    except InputError as unreadable:
        print(f"error: {unreadable}", file=stderr)
        return None
    try:
        return build_cluster(documents, stderr)
    except InvalidInput as invalid:
        for line in invalid.lines:
            print(line, file=stderr)
        print(
            f"error: {len(invalid.lines)} violation(s) in the input; nothing was simulated",
            file=stderr,
        )
        return None


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    if args.plot and not args.timeline:
        print("error: --plot needs --timeline TRACE", file=stderr)
        return EXIT_INVALID
    if args.timeline:
        from scheduler.cli import timeline

        return timeline.run(args, stdin, stdout, stderr)
    cluster = _load_cluster(args.files, stdin, stderr)
    if cluster is None:
        return EXIT_INVALID
    report, steady, evictions = snapshot_with_evictions(cluster, max_cycles=args.max_cycles)
    if args.json:
        json.dump(report, stdout, indent=2)
        stdout.write("\n")
    else:
        stdout.write(
            snapshot_table(report, [(e.victim, e.preemptor or "-", e.reason) for e in evictions])
        )
    if not steady:
        print(
            f"error: no steady state within {args.max_cycles} scheduling cycles; "
            "the report shows the state at that point",
            file=stderr,
        )
        return EXIT_NOT_STEADY
    return EXIT_STEADY
