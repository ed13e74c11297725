"""Kueue's scheduler benchmark, Kueue and kuota side by side (``make bench-kueue``).

Each run starts a fresh local control plane (:class:`e2e.cluster.controlplane.ControlPlane`,
no nodes: the runner creates Workloads directly), installs one side, and runs
Kueue's ``performance-scheduler-runner`` against it with ``--qps=1000 --burst=2000``:

* **kueue**: Kueue's own CRDs from the module, and ``minimalkueue`` (Kueue's core
  controllers and scheduler) with the admin kubeconfig;
* **kuota**: what ``python -m e2e.cluster up --kuota`` installs: the chart's RBAC,
  kuota's CRDs, the webhook on 127.0.0.1 registered by URL, one scheduler replica
  with the chart's ServiceAccount identity.

Sides alternate (kueue, kuota, kueue, kuota, ...; ``--runs N`` pairs), never two
clusters at once.  While the runner plays the Workloads, the CPU seconds and peak
RSS of every process (etcd, kube-apiserver, the controller manager, the
scheduler(s), the webhook, the runner) are sampled from /proc; the figures are
those at the moment the runner wrote its summary.  Wall time is from the
runner's start to its summary.  Each side is then checked against the config's
``rangespec.yaml`` with Kueue's own checker (its test binary), given the wall
time and the scheduler's CPU as command stats.  One table is printed;
``--json FILE`` writes the same.

``--scale F`` multiplies every Workload set's count (a smoke run: ``--scale 0.05``);
the make targets use the configs as they are.

``--cpus N`` (``make bench-kueue BENCH_CPUS=1.5``) caps the CPU of every process of
the cluster and of the side under test at N CPUs together, with a cgroup quota
(``cpu_cap.py``); the runner is not capped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from benchmarks.kueue_perf.cpu_cap import CapError, CpuCap, parse_cpus
from benchmarks.kueue_perf.procstat import Sampler
from benchmarks.kueue_perf.report import (
    RunResult,
    apiserver_requests,
    apply_summary,
    checker_failures,
    parse_summary,
    scheduler_metrics,
    webhook_metrics,
)
from benchmarks.kueue_perf.report import document as report_document
from benchmarks.kueue_perf.report import render as render_table
from benchmarks.kueue_perf.tools import MINIMALKUEUE, RUNNER, KueuePerfTools
from e2e.cluster.controlplane import ClusterInfo, ControlPlane, read_state, recorded_processes
from e2e.cluster.pki import ClusterPki
from e2e.cluster.processes import ProcessRecord, clean_env, log_tail, spawn, stop
from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import install_kuota, kubectl
from e2e.kuota_scheduler import start_schedulers
from scheduler.api.crds import SERVED_LEGACY_VERSIONS

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUTS = {"baseline": 15 * 60, "large-scale": 40 * 60}
"""The runner's --timeout per config (upstream's in-cluster target uses 15m for baseline)."""
MEASURED = ("etcd", "kube-apiserver", "kube-controller-manager")


@dataclass
class Side:
    """What one run started besides the control plane, to measure and to stop."""

    processes: dict[str, ProcessRecord]
    stoppers: list[Any]
    scheduler_metrics: Callable[[], tuple[int, str]] | None = None
    """Reads the scheduler's /metrics: (status, text)."""
    webhook_metrics: Callable[[], tuple[int, str]] | None = None
    """Reads the webhook's /metrics: (status, text)."""


def scaled_config(source: Path, target: Path, scale: float) -> Path:
    """The generator config with every Workload set's count multiplied by ``scale`` (min 1)."""
    config = yaml.safe_load(source.read_text())
    for cohort in config["cohorts"]:
        for queue_set in cohort["queuesSets"]:
            for workload_set in queue_set["workloadsSets"]:
                workload_set["count"] = max(1, math.ceil(workload_set["count"] * scale))
    target.write_text(yaml.safe_dump(config, sort_keys=False))
    return target


def _machine_busy_ticks() -> int:
    first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    values = [int(value) for value in first]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values[:8]) - idle


def _start_kueue(tools: KueuePerfTools, kube: ToolPaths, info: ClusterInfo, workdir: Path) -> Side:
    kubectl(
        kube.binary("kubectl"),
        info.kubeconfig,
        "apply",
        "--server-side",
        "-f",
        str(tools.crd_dir),
    )
    kubectl(
        kube.binary("kubectl"),
        info.kubeconfig,
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd",
        "--all",
    )
    process, record = spawn(
        MINIMALKUEUE,
        [str(tools.binary(MINIMALKUEUE)), "--kubeconfig", str(info.kubeconfig)],
        workdir=workdir,
        env=clean_env(workdir),
        die_with_parent=True,
    )
    time.sleep(3)
    if process.poll() is not None:
        raise RuntimeError(f"minimalkueue exited ({process.returncode}):\n{log_tail(record.log)}")
    return Side(
        processes={MINIMALKUEUE: record},
        stoppers=[lambda: stop(record, reap=process.poll)],
    )


def _start_kuota(
    kube: ToolPaths, info: ClusterInfo, workdir: Path, *, legacy_versions: Collection[str]
) -> Side:
    webhook = install_kuota(
        kube.binary("kubectl"), info.kubeconfig, workdir, legacy_versions=legacy_versions
    )
    try:
        replicas = start_schedulers(
            kube.binary("kubectl"),
            info.kubeconfig,
            ClusterPki(workdir / "pki"),
            info.server,
            workdir,
            lease_timings=(),  # the chart's Lease timings, not the failover tests' short ones
        )
    except BaseException:
        webhook.stop()
        raise
    processes = {"kuota-scheduler": replicas[0].record, "kuota-webhook": webhook.record}
    # The scheduler stops first (nothing writes while the cluster goes), the webhook last.
    return Side(
        processes=processes,
        stoppers=[replicas[0].stop, webhook.stop],
        scheduler_metrics=lambda: replicas[0].endpoint("/metrics"),
        webhook_metrics=webhook.metrics,
    )


def _kept_metrics(read: Callable[[], tuple[int, str]], target: Path) -> str | None:
    """A process's /metrics text, also written to ``target``; None (said) when unreadable."""
    status, text = read()
    if status != 200:
        print(f"   no metrics for {target.name}: {status} {text[:200]}", flush=True)
        return None
    target.write_text(text)
    return text


def _unfinished(info: ClusterInfo) -> int | None:
    """Workloads without Finished=True now (None when the API server does not answer)."""
    try:
        reply = info.client().call("GET", "/apis/kueue.x-k8s.io/v1beta2/workloads")
    except OSError:  # a timeout too: 50,000 Workloads from a busy API server
        return None
    if reply.status != 200 or not isinstance(reply.body, dict):
        return None
    count = 0
    for item in reply.body.get("items", []):
        conditions = item.get("status", {}).get("conditions", [])
        if not any(c.get("type") == "Finished" and c.get("status") == "True" for c in conditions):
            count += 1
    return count


def _start_profilers(side: Side, out: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy (from the venv, installed by hand: not a dependency) on kuota's processes."""
    py_spy = Path(sys.executable).parent / "py-spy"
    if not py_spy.exists():
        print("   --profile: no py-spy next to the interpreter; pip install py-spy", flush=True)
        return []
    profilers = []
    for name, record in side.processes.items():
        profilers.append(
            subprocess.Popen(
                [
                    str(py_spy),
                    "record",
                    "--pid",
                    str(record.pid),
                    "--rate",
                    "20",
                    "--format",
                    "raw",
                    "--output",
                    str(out / f"{name}.py-spy.txt"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=open(out / f"{name}.py-spy.log", "wb"),  # noqa: SIM115
            )
        )
    return profilers


def _run_checker(
    tools: KueuePerfTools, result: RunResult, out: Path, rangespec: Path, scheduler: str
) -> None:
    usage = result.processes.get(scheduler)
    stats = {
        "wallMs": int(result.wall_seconds * 1000),
        "userMs": int((usage.cpu_seconds if usage else 0) * 1000),
        "sysMs": 0,
        "maxrss": int((usage.peak_rss_bytes if usage else 0) // 1024),
    }
    stats_path = out / "cmdStats.yaml"
    stats_path.write_text(yaml.safe_dump(stats))
    done = subprocess.run(
        [
            str(tools.binary("performance-scheduler-checker")),
            "-test.v",
            f"--summary={out / 'summary.yaml'}",
            f"--cmdStats={stats_path}",
            f"--range={rangespec}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    (out / "checker.log").write_text(done.stdout + done.stderr)
    result.checker_passed = done.returncode == 0
    result.checker_failures = checker_failures(done.stdout)


def run_side(
    side: str,
    *,
    index: int,
    tools: KueuePerfTools,
    kube: ToolPaths,
    generator: Path,
    rangespec: Path,
    out_root: Path,
    timeout: int,
    profile: bool = False,
    legacy_versions: Collection[str] = SERVED_LEGACY_VERSIONS,
    cpus: float | None = None,
) -> RunResult:
    out = out_root / f"{index:02d}-{side}"
    shutil.rmtree(out, ignore_errors=True)
    cluster_dir = out / "cluster"
    out.mkdir(parents=True)
    print(f"== run {index}: {side} (cluster in {cluster_dir})", flush=True)
    plane = ControlPlane(f"bench-{side}", tools=kube, workdir=cluster_dir, nodes=())
    info = plane.start()
    started_side: Side | None = None
    cap: CpuCap | None = None
    runner: subprocess.Popen[bytes] | None = None
    result = RunResult(side=side, finished=False, wall_seconds=0.0, commit=_commit())
    try:
        if side == "kueue":
            started_side = _start_kueue(tools, kube, info, cluster_dir)
        else:
            started_side = _start_kuota(kube, info, cluster_dir, legacy_versions=legacy_versions)
        state = read_state(cluster_dir) or {}
        pids = {
            record.name: record.pid
            for record in recorded_processes(state)
            if record.name in MEASURED
        }
        pids.update({name: record.pid for name, record in started_side.processes.items()})
        if cpus is not None:
            cap = CpuCap(cpus).open()
            capped = [record.pid for record in recorded_processes(state)]
            capped += [record.pid for record in started_side.processes.values()]
            moved = cap.add(capped)
            print(
                f"   {side}: {len(moved)} processes capped at {cpus} CPUs ({cap.layout}, "
                f"{cap.path})",
                flush=True,
            )
        sampler = Sampler(pids)
        sampler.start()
        env = clean_env(out)
        env["KUBECONFIG"] = str(info.kubeconfig)
        summary = out / "summary.yaml"
        result.load_average = [round(os.getloadavg()[0], 2)]
        busy_before = _machine_busy_ticks()
        with open(out / "runner.log", "wb") as runner_log:
            started = time.monotonic()
            runner = subprocess.Popen(
                [
                    str(tools.binary(RUNNER)),
                    "--o",
                    str(out),
                    f"--generatorConfig={generator}",
                    "--qps=1000",
                    "--burst=2000",
                    f"--timeout={timeout}s",
                ],
                stdout=runner_log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=out,
            )
        sampler.add("runner", runner.pid)
        profilers = _start_profilers(started_side, out) if profile and side == "kuota" else []
        last_report = started
        while runner.poll() is None and not summary.exists():
            time.sleep(0.5)
            if time.monotonic() - last_report >= 60:
                last_report = time.monotonic()
                print(f"   {side}: {last_report - started:.0f} s", flush=True)
        result.wall_seconds = round(time.monotonic() - started, 1)
        try:  # an API server that is still busy may not answer: the run goes on without
            apiserver = info.client().call("GET", "/metrics", timeout=30)
            if apiserver.status == 200 and isinstance(apiserver.body, str):
                (out / "kube-apiserver.metrics.txt").write_text(apiserver.body)
                result.apiserver_requests = apiserver_requests(apiserver.body)
        except OSError as failure:
            print(f"   {side}: no kube-apiserver metrics: {failure}", flush=True)
        if started_side.scheduler_metrics:
            text = _kept_metrics(
                started_side.scheduler_metrics, out / "kuota-scheduler.metrics.txt"
            )
            if text is not None:
                result.scheduler_metrics = scheduler_metrics(text)
        if started_side.webhook_metrics:
            text = _kept_metrics(started_side.webhook_metrics, out / "kuota-webhook.metrics.txt")
            if text is not None:
                result.webhook_metrics = webhook_metrics(text)
        for profiler in profilers:
            profiler.send_signal(signal.SIGINT)  # py-spy writes its profile on SIGINT
        for profiler in profilers:
            profiler.wait(timeout=60)
        result.processes = sampler.stop()
        result.machine_busy_cpu_seconds = round(
            (_machine_busy_ticks() - busy_before) / os.sysconf("SC_CLK_TCK"), 1
        )
        result.load_average.append(round(os.getloadavg()[0], 2))
        if summary.exists():
            time.sleep(1)  # written whole: the CSVs follow it
            result.finished = True
            apply_summary(result, parse_summary(summary.read_text()))
            scheduler = MINIMALKUEUE if side == "kueue" else "kuota-scheduler"
            _run_checker(tools, result, out, rangespec, scheduler)
        else:
            result.unfinished = _unfinished(info)
            tail = log_tail(out / "runner.log", 15)
            print(f"   {side}: the runner exited without a summary:\n{tail}")
        print(
            f"   {side}: {'finished' if result.finished else 'NOT finished'} "
            f"in {result.wall_seconds:.0f} s",
            flush=True,
        )
    finally:
        if runner is not None and runner.poll() is None:
            try:  # after the summary it deletes what it created: not measured, not needed
                runner.wait(timeout=30)
            except subprocess.TimeoutExpired:
                runner.terminate()
                try:
                    runner.wait(timeout=30)
                except subprocess.TimeoutExpired:  # 50,000 deletions queued: it lingers
                    runner.kill()
                    runner.wait(timeout=30)
        if started_side is not None:
            started_side.stoppers[0]()
        plane.stop()
        if started_side is not None:
            for stopper in started_side.stoppers[1:]:
                stopper()
        if cap is not None:
            cap.close()
        shutil.rmtree(cluster_dir / "etcd-data", ignore_errors=True)
    return result


def _commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    dirty = "+dirty" if git("status", "--porcelain", "--untracked-files=no") else ""
    return git("rev-parse", "--short", "HEAD") + dirty


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kueue_perf", description=__doc__)
    parser.add_argument("--config", choices=("baseline", "large-scale"), default="baseline")
    parser.add_argument("--runs", type=int, default=1, help="pairs of runs (kueue then kuota)")
    parser.add_argument("--sides", default="kueue,kuota", help="comma-separated, in run order")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply Workload counts")
    parser.add_argument("--timeout", type=int, help="the runner's --timeout, seconds")
    parser.add_argument(
        "--profile", action="store_true", help="py-spy on kuota's processes (raw stacks in --out)"
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--kuota-legacy-versions",
        default=",".join(SERVED_LEGACY_VERSIONS),
        help="versions kuota's CRDs serve besides v1beta2 (the chart's "
        "crds.servedLegacyVersions), comma-separated; '' for none (default: the chart's, "
        f"{','.join(SERVED_LEGACY_VERSIONS)})",
    )
    parser.add_argument(
        "--cpus",
        help="cap the cluster and the side under test at this many CPUs together "
        "(a cgroup quota, e.g. 1.5; needs root); empty or absent: no cap",
    )
    parser.add_argument(
        "--out", type=Path, default=REPO_ROOT / "build" / "bench-kueue", help="artifacts"
    )
    args = parser.parse_args(argv)
    try:
        cpus = parse_cpus(args.cpus)
        if cpus is not None:
            CpuCap(cpus)  # fails now, not after the first run, without a cpu controller
    except CapError as failure:
        parser.error(str(failure))
    args.out = args.out.resolve()
    tools = KueuePerfTools.resolve()
    kube = ToolPaths.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    generator = tools.generator_config(args.config)
    if args.scale != 1.0:
        generator = scaled_config(generator, args.out / "generator.yaml", args.scale)
    timeout = args.timeout or TIMEOUTS[args.config]
    sides = [side.strip() for side in args.sides.split(",") if side.strip()]
    legacy_versions = [v.strip() for v in args.kuota_legacy_versions.split(",") if v.strip()]
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "cores": os.cpu_count(),
        "config": args.config,
        "scale": args.scale,
        "kueue": "v0.19.2",
        "kuota_legacy_versions": legacy_versions,
        "cpu_cap": cpus,
    }
    results: list[RunResult] = []
    index = 0
    for _ in range(args.runs):
        for side in sides:
            index += 1
            results.append(
                run_side(
                    side,
                    index=index,
                    tools=tools,
                    kube=kube,
                    generator=generator,
                    rangespec=tools.rangespec(args.config),
                    out_root=args.out,
                    timeout=timeout,
                    profile=args.profile,
                    legacy_versions=legacy_versions,
                    cpus=cpus,
                )
            )
            if args.json:
                args.json.write_text(json.dumps(report_document(results, meta), indent=2) + "\n")
    print()
    print(
        f"Kueue's scheduler benchmark, config {args.config} (scale {args.scale}), "
        f"{meta['date']}, commit {meta['commit']}, {meta['cores']} cores; kuota's CRDs serve "
        f"v1beta2 and {', '.join(legacy_versions) or 'no legacy version'}; "
        + (f"cluster capped at {cpus} CPUs" if cpus is not None else "no CPU cap")
    )
    for result in results:
        print(
            f"  {result.side}: load average {result.load_average}, "
            f"machine busy {result.machine_busy_cpu_seconds} CPU s over {result.wall_seconds} s"
        )
    print(render_table(results))
    return 0 if all(result.finished for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
