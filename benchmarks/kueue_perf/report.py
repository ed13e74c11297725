"""The pure part of the side-by-side benchmark: reading results, the table, the ratios.

No processes, no clock: a run's figures come in as data (the runner's
``summary.yaml``, the wall time, per-process CPU and peak RSS) and go out as
one table and one JSON document.  Minimum ClusterQueue usage is computed the
way Kueue's checker computes it: CPU used (mCPU x ms, from the ClusterQueue
status events the runner recorded) over nominal quota x monitored time.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

CLASSES = ("large", "medium", "small")
"""Workload classes of the runner's configs, best served first."""


@dataclass
class ProcessUsage:
    """CPU seconds (user + system, the process and its children) and peak RSS of one process."""

    cpu_seconds: float
    peak_rss_bytes: int


@dataclass
class RunResult:
    """One run of one side."""

    side: str
    finished: bool
    wall_seconds: float
    admission_ms: dict[str, int] = field(default_factory=dict)
    """Average time to admission per Workload class."""
    workloads: dict[str, int] = field(default_factory=dict)
    """Workloads recorded per class."""
    evictions: int = 0
    min_cq_usage_percent: float | None = None
    processes: dict[str, ProcessUsage] = field(default_factory=dict)
    checker_passed: bool | None = None
    checker_failures: list[str] = field(default_factory=list)
    unfinished: int | None = None
    """Workloads not Finished when the run ended (only looked up when the runner failed)."""
    load_average: list[float] = field(default_factory=list)
    """The machine's 1-minute load average when the run started and when it ended."""
    machine_busy_cpu_seconds: float | None = None
    """CPU seconds the whole machine was busy during the run (others' work included)."""
    commit: str = ""
    """The commit of the working tree the side's processes started from."""
    scheduler_metrics: dict[str, float] = field(default_factory=dict)
    """kuota's scheduler: cycles, their seconds, API writes by verb and resource (count, mean)."""
    apiserver_requests: dict[str, float] = field(default_factory=dict)
    """kube-apiserver: writes by verb and resource, webhook calls (admission, conversion)."""
    webhook_metrics: dict[str, float] = field(default_factory=dict)
    """kuota's webhook: requests by endpoint, mean ms, connections closed by why."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def parse_summary(text: str) -> dict[str, Any]:
    """The runner's summary.yaml as a dict (raises ValueError when it is not one)."""
    loaded = yaml.safe_load(text)
    if not isinstance(loaded, dict):
        raise ValueError("summary.yaml is not a mapping")
    return loaded


def _milliseconds_between(first: Any, last: Any) -> float:
    from datetime import datetime

    def when(value: Any) -> datetime:
        if isinstance(value, datetime):
            return value
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))

    return (when(last) - when(first)).total_seconds() * 1000


def cq_usage_percent(summary: dict[str, Any]) -> dict[str, float]:
    """Usage per ClusterQueue class, as Kueue's checker computes it (classes with no data skip)."""
    usage: dict[str, float] = {}
    for name, group in (summary.get("clusterQueueClasses") or {}).items():
        quota = float(group.get("nominalQuota") or 0)
        elapsed = _milliseconds_between(group["firstEventTime"], group["lastEventTime"])
        if quota <= 0 or elapsed <= 0:
            continue
        usage[name] = float(group.get("cpuUsed") or 0) * 100 / (quota * elapsed)
    return usage


def apply_summary(result: RunResult, summary: dict[str, Any]) -> None:
    """Fill ``result``'s admission times, counts, evictions and usage from a summary."""
    classes = summary.get("workloadClasses") or {}
    result.admission_ms = {
        name: int(data.get("averageTimeToAdmissionMs") or 0) for name, data in classes.items()
    }
    result.workloads = {name: int(data.get("count") or 0) for name, data in classes.items()}
    result.evictions = sum(int(data.get("totalEvictions") or 0) for data in classes.values())
    usage = cq_usage_percent(summary)
    result.min_cq_usage_percent = min(usage.values()) if usage else None


def scheduler_metrics(text: str) -> dict[str, float]:
    """Cycle count and seconds, and API writes (count and mean ms) by verb and resource,
    from kuota's scheduler's /metrics text (pure)."""
    found: dict[str, float] = {}
    sums: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        name, _, value = line.rpartition(" ")
        if name == "kuota_cycle_duration_seconds_count":
            found["cycles"] = float(value)
        elif name == "kuota_cycle_duration_seconds_sum":
            found["cycle seconds"] = round(float(value), 2)
        elif name.startswith("kuota_api_write_duration_seconds_"):
            labels = dict(
                pair.split("=", 1) for pair in name[name.index("{") + 1 : -1].split(",") if pair
            )
            verb, resource = (labels.get(key, "").strip('"') for key in ("verb", "resource"))
            what = f"{verb} {resource}"
            if name.startswith("kuota_api_write_duration_seconds_count"):
                found[f"writes {what}"] = float(value)
            elif name.startswith("kuota_api_write_duration_seconds_sum"):
                sums[what] = float(value)
    for what, total in sums.items():
        count = found.get(f"writes {what}", 0)
        if count:
            found[f"mean ms {what}"] = round(total * 1000 / count, 1)
    return found


def webhook_metrics(text: str) -> dict[str, float]:
    """Requests answered and their mean ms by endpoint, connections open, and connections
    closed to stay within the bound by why, from kuota's webhook's /metrics text (pure)."""
    found: dict[str, float] = {}
    seconds: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            endpoint = sample.labels.get("endpoint", "")
            if sample.name == "kuota_webhook_requests_total":
                key = f"requests {endpoint}"
                found[key] = found.get(key, 0) + sample.value
            elif sample.name == "kuota_webhook_request_duration_seconds_sum":
                seconds[endpoint] = seconds.get(endpoint, 0) + sample.value
            elif sample.name == "kuota_webhook_connections_evicted_total":
                found[f"connections closed {sample.labels.get('why', '')}"] = sample.value
            elif sample.name == "kuota_webhook_connections":
                found["connections open"] = sample.value
    for endpoint, total in seconds.items():
        count = found.get(f"requests {endpoint}", 0)
        if count:
            found[f"mean ms {endpoint}"] = round(total * 1000 / count, 2)
    return found


READS = frozenset({"GET", "LIST", "WATCH", "CONNECT"})


def apiserver_requests(text: str) -> dict[str, float]:
    """What the side cost the API server, from its /metrics text (pure): writes by verb and
    resource (reads left out: both sides read from watches), admission webhook calls by
    type, and CRD conversion webhook calls, each a count since the cluster started."""
    found: dict[str, float] = {}

    def add(key: str, value: float) -> None:
        found[key] = found.get(key, 0.0) + value

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == "apiserver_request_total" and labels.get("verb") not in READS:
                resource = labels.get("resource", "")
                if labels.get("subresource"):
                    resource += "/" + labels["subresource"]
                add(f"{labels.get('verb')} {resource}", sample.value)
            elif sample.name == "apiserver_admission_webhook_admission_duration_seconds_count":
                add(f"admission webhook calls, {labels.get('type', '?')}", sample.value)
            elif sample.name == "apiserver_crd_conversion_webhook_duration_seconds_count":
                add("conversion webhook calls", sample.value)
    return found


def checker_failures(output: str) -> list[str]:
    """The failure lines of the checker's ``go test -test.v`` output."""
    failures = []
    for line in output.splitlines():
        text = line.strip()
        if "_test.go:" in text:
            failures.append(text.split(": ", 1)[-1])
    return failures


# -- the table ----------------------------------------------------------------------------------


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.fmean(present) if present else None


def _ratio(kuota: float | None, kueue: float | None) -> str:
    if kuota is None or kueue is None or kueue == 0:
        return "-"
    return f"{kuota / kueue:.2f}x"


def _fmt(value: float | None, unit: str = "", digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}{unit}"


def rows(results: Sequence[RunResult]) -> list[tuple[str, str, str, str]]:
    """(measure, Kueue, kuota, kuota/Kueue) rows, averaged over the runs of each side."""
    sides = {
        side: [result for result in results if result.side == side] for side in ("kueue", "kuota")
    }

    def per_run(side: str, pick: Any, unit: str = "", digits: int = 0) -> tuple[str, float | None]:
        values = [pick(result) for result in sides[side]]
        text = ", ".join(_fmt(value, unit, digits) for value in values) or "-"
        return text, _mean(values)

    table: list[tuple[str, str, str, str]] = []

    def add(measure: str, pick: Any, unit: str = "", digits: int = 0) -> None:
        kueue_text, kueue_mean = per_run("kueue", pick, unit, digits)
        kuota_text, kuota_mean = per_run("kuota", pick, unit, digits)
        table.append((measure, kueue_text, kuota_text, _ratio(kuota_mean, kueue_mean)))

    add(
        "runner finished (summary written)",
        lambda r: 1.0 if r.finished else 0.0,
    )
    table[-1] = (
        table[-1][0],
        ", ".join("yes" if r.finished else "NO" for r in sides["kueue"]) or "-",
        ", ".join("yes" if r.finished else "NO" for r in sides["kuota"]) or "-",
        "",
    )
    add("wall time", lambda r: r.wall_seconds, " s")
    for name in CLASSES:
        add(
            f"avg time to admission, {name}",
            lambda r, name=name: r.admission_ms[name] / 1000 if name in r.admission_ms else None,
            " s",
            1,
        )
    add("min ClusterQueue usage", lambda r: r.min_cq_usage_percent, " %", 1)
    add("evictions", lambda r: float(r.evictions) if r.finished else None)
    names: list[str] = []
    for result in results:
        names += [name for name in result.processes if name not in names]
    for name in names:
        add(
            f"CPU {name}",
            lambda r, name=name: r.processes[name].cpu_seconds if name in r.processes else None,
            " s",
        )
        add(
            f"peak RSS {name}",
            lambda r, name=name: (
                r.processes[name].peak_rss_bytes / 2**20 if name in r.processes else None
            ),
            " MiB",
        )
    table.append(
        (
            "checker (rangespec)",
            ", ".join(_verdict(r) for r in sides["kueue"]) or "-",
            ", ".join(_verdict(r) for r in sides["kuota"]) or "-",
            "",
        )
    )
    return table


def _verdict(result: RunResult) -> str:
    if result.checker_passed is None:
        return "not run"
    return "pass" if result.checker_passed else "FAIL"


def render(results: Sequence[RunResult]) -> str:
    """The side-by-side table as aligned text."""
    header = ("measure", "Kueue v0.19.2 (minimalkueue)", "kuota", "kuota/Kueue")
    table = [header, *rows(results)]
    widths = [max(len(row[column]) for row in table) for column in range(4)]
    lines = []
    for index, row in enumerate(table):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    for result in results:
        for failure in result.checker_failures:
            lines.append(f"checker, {result.side}: {failure}")
    for result in results:
        if result.scheduler_metrics:
            shown = ", ".join(f"{k} {v:g}" for k, v in sorted(result.scheduler_metrics.items()))
            lines.append(f"kuota-scheduler metrics ({result.commit}): {shown}")
    for result in results:
        if result.webhook_metrics:
            shown = ", ".join(f"{k} {v:g}" for k, v in sorted(result.webhook_metrics.items()))
            lines.append(f"kuota-webhook metrics ({result.commit}): {shown}")
    for result in results:
        if result.apiserver_requests:
            busiest = sorted(result.apiserver_requests.items(), key=lambda item: -item[1])[:12]
            shown = ", ".join(f"{k} {v:g}" for k, v in busiest)
            lines.append(f"kube-apiserver, {result.side}: {shown}")
    return "\n".join(line.rstrip() for line in lines)


def document(results: Sequence[RunResult], meta: dict[str, Any]) -> dict[str, Any]:
    """The JSON written by ``--json``: the runs, the table and how they were made."""
    return {
        "meta": meta,
        "runs": [result.to_json() for result in results],
        "table": [list(row) for row in rows(results)],
    }
