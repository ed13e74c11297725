"""Structured logs for every kuota process: one JSON object a line, with context.

Both long-running processes (``kuota-scheduler`` and ``kuota-webhook``) and
the certificate bootstrap log through :class:`JsonFormatter`:

    {"time": "2026-11-22T12:00:00.123+00:00", "level": "info",
     "logger": "kuota.scheduler", "msg": "admitted", "cycle": 42,
     "object": "team-a/job-train-3f2a1", "cluster_queue": "research", ...}

A line carries, in this order: the time, level, logger and message; the
*context* bound with :func:`bind` (a ``contextvars`` variable, so it follows
asyncio tasks and never leaks between concurrent requests or writes); then
the call's own ``extra`` fields.  The scheduler binds a ``cycle`` number for
everything logged during one turn and the ``object`` key while it acts on one
object, so every decision's line names its cycle and its object without each
call repeating them.

Why here, at the top of the ``scheduler`` package and outside its layers:
logging is a concern of processes, not of any layer, and both processes need
the same format; the webhook may import only ``scheduler.api`` and
``scheduler.jobs`` of the scheduler, and neither is about logging.  Like
``scheduler.version``, this module imports nothing from kuota (an
import-linter contract keeps it so), so any package may use it without
bending the layering.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

_NOTHING: Mapping[str, Any] = MappingProxyType({})
_CONTEXT: ContextVar[Mapping[str, Any]] = ContextVar("kuota_log_context", default=_NOTHING)
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
QUIET_LOGGERS = ("aiohttp.access", "kubernetes_asyncio")


@contextmanager
def bind(**fields: Any) -> Iterator[None]:
    """Add ``fields`` to every line logged inside the block (in this task and those it starts)."""
    token = _CONTEXT.set({**_CONTEXT.get(), **fields})
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def context() -> Mapping[str, Any]:
    """The fields bound right now."""
    return _CONTEXT.get()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, msg, bound context, then ``extra`` fields.

    An ``extra={"context": {...}}`` mapping is flattened into the line like
    any other extra field (the webhook's older calling convention).  A
    traceback goes under ``exception``.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_CONTEXT.get())
        for key, value in vars(record).items():
            if key in _STANDARD or key.startswith("_"):
                continue
            if key == "context" and isinstance(value, Mapping):
                entry.update(value)
            else:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure(level: str = "info", *, stream: Any = None) -> None:
    """Send every logger's records to ``stream`` (stderr) as JSON lines at ``level``."""
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in QUIET_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)
