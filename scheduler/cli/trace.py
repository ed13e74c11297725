"""Reading a capacity-planning trace for ``kuota simulate --timeline``.

A trace lists jobs to submit: CSV with a header row, or JSON lines.  Columns
(keys): ``submit`` (seconds), ``requests`` (``cpu=2,memory=4Gi``, per pod),
``count`` (pods, default 1), ``duration`` (seconds once admitted), ``queue``
(``namespace/localqueue``), ``priority`` (default 0), and optionally
``name``, ``tolerations`` (``key=value:Effect``, ``key:Effect`` or ``key``,
``;``-separated), ``nodeSelector`` (``key=value``, ``;``-separated) and
``maxExecutionSeconds`` (the job's ``kueue.x-k8s.io/max-exec-time-seconds``:
deactivated once admitted that long in total).  In
JSON lines ``requests`` and ``nodeSelector`` may be objects and
``tolerations`` a list of Kubernetes tolerations.  A malformed row is an
error naming the file and line (exit 2).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.api.quantity import Quantity, QuantityError


class TraceError(ValueError):
    """A trace that cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class TraceJob:
    line: int
    name: str
    submit: float
    requests: Mapping[str, str]
    count: int
    duration: float
    namespace: str
    queue: str
    priority: int = 0
    tolerations: tuple[Mapping[str, Any], ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=dict)
    max_execution_seconds: int | None = None
    """The Workload's ``maximumExecutionTimeSeconds`` (docs/concepts.md)."""

    @property
    def queue_key(self) -> str:
        return f"{self.namespace}/{self.queue}"


def _pairs(text: str, separator: str) -> dict[str, str]:
    result = {}
    for part in text.split(separator):
        part = part.strip()
        if not part:
            continue
        key, equals, value = part.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"expected key=value, got {part!r}")
        result[key.strip()] = value.strip()
    return result


def _toleration(text: str) -> dict[str, Any]:
    """``key=value:Effect`` (Equal), ``key:Effect`` or ``key`` (Exists): pure."""
    selector, _, effect = text.partition(":")
    key, equals, value = selector.partition("=")
    toleration: dict[str, Any] = {"key": key.strip(), "operator": "Equal" if equals else "Exists"}
    if equals:
        toleration["value"] = value.strip()
    if effect.strip():
        toleration["effect"] = effect.strip()
    return toleration


def _requests(value: object) -> dict[str, str]:
    pairs = (
        {str(k): str(v) for k, v in value.items()}
        if isinstance(value, Mapping)
        else _pairs(str(value or "").replace(";", ","), ",")
    )
    if not pairs:
        raise ValueError("requests is required, e.g. cpu=2,memory=4Gi")
    for resource, amount in pairs.items():
        try:
            Quantity.parse(amount)
        except QuantityError as failure:
            raise ValueError(f"requests {resource}: {failure}") from failure
    return pairs


def _number(row: Mapping[str, Any], key: str, default: float | None = None) -> float:
    value = row.get(key)
    if value is None or value == "":
        if default is None:
            raise ValueError(f"{key} is required")
        return default
    number = float(value)
    if number < 0 or number != number:
        raise ValueError(f"{key} must be a non-negative number, not {value!r}")
    return number


def _integer(row: Mapping[str, Any], key: str, default: int) -> int:
    value = row.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, float) or (
        isinstance(value, str) and not value.strip().lstrip("+-").isdigit()
    ):
        raise ValueError(f"{key} must be an integer, not {value!r}")
    return int(value)


def _job(row: Mapping[str, Any], line: int, index: int) -> TraceJob:
    queue = str(row.get("queue") or "")
    namespace, slash, local_queue = queue.partition("/")
    if not slash or not namespace or not local_queue:
        raise ValueError(f"queue must be namespace/localqueue, not {queue!r}")
    count = _integer(row, "count", 1)
    if count < 1:
        raise ValueError(f"count must be at least 1, not {count}")
    tolerations_value = row.get("tolerations") or []
    if isinstance(tolerations_value, str):
        tolerations = tuple(
            _toleration(part.strip()) for part in tolerations_value.split(";") if part.strip()
        )
    else:
        tolerations = tuple(dict(item) for item in tolerations_value)
    selector_value = row.get("nodeSelector") or {}
    node_selector = (
        {str(k): str(v) for k, v in selector_value.items()}
        if isinstance(selector_value, Mapping)
        else _pairs(str(selector_value), ";")
    )
    return TraceJob(
        line=line,
        name=str(row.get("name") or f"job-{index}"),
        submit=_number(row, "submit"),
        requests=_requests(row.get("requests")),
        count=count,
        duration=_number(row, "duration"),
        namespace=namespace,
        queue=local_queue,
        priority=_integer(row, "priority", 0),
        tolerations=tolerations,
        node_selector=node_selector,
        max_execution_seconds=_max_execution(row),
    )


def _max_execution(row: Mapping[str, Any]) -> int | None:
    value = _integer(row, "maxExecutionSeconds", 0)
    if value < 0:
        raise ValueError(f"maxExecutionSeconds must be positive, not {value}")
    return value or None


def _rows(text: str, source: str) -> list[tuple[int, Mapping[str, Any]]]:
    if text.lstrip().startswith("{") or source.endswith((".jsonl", ".ndjson")):
        rows: list[tuple[int, Mapping[str, Any]]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as failure:
                raise TraceError(f"{source}:{number}: invalid JSON: {failure.msg}") from failure
            if not isinstance(row, dict):
                raise TraceError(f"{source}:{number}: a trace line must be a JSON object")
            rows.append((number, row))
        return rows
    reader = csv.DictReader(io.StringIO(text), skipinitialspace=True)
    if not reader.fieldnames or "submit" not in reader.fieldnames:
        raise TraceError(
            f"{source}:1: a CSV trace needs a header row naming submit, requests, count, "
            "duration, queue, priority"
        )
    return [
        (
            reader.line_num,
            {k: (v.strip() if isinstance(v, str) else v) for k, v in row.items() if k},
        )
        for row in reader
    ]


def parse_trace(text: str, source: str) -> list[TraceJob]:
    """Every job of the trace, in submission order (ties keep trace order): pure."""
    jobs = []
    for index, (line, row) in enumerate(_rows(text, source), start=1):
        try:
            jobs.append(_job(row, line, index))
        except (ValueError, TypeError) as failure:
            raise TraceError(f"{source}:{line}: {failure}") from failure
    names: dict[str, int] = {}
    for job in jobs:
        key = f"{job.namespace}/{job.name}"
        if key in names:
            raise TraceError(f"{source}:{job.line}: job {key} repeats line {names[key]}")
        names[key] = job.line
    return sorted(jobs, key=lambda job: job.submit)
