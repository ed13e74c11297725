"""The webhook's logger: one JSON object per line on stderr (:mod:`scheduler.logs`).

The format is the scheduler's, from the one formatter both processes share.
Each decision is logged once with its context (endpoint, uid,
namespace/name, user, outcome), passed as ``extra={"context": {...}}`` or
bound with :func:`scheduler.logs.bind`, so it can be found by the object it
concerns.
"""

from __future__ import annotations

import logging

from scheduler import logs

LOGGER_NAME = "kuota.webhook"


def configure(level: str) -> None:
    """Route kuota's and aiohttp's loggers to JSON lines on stderr."""
    logs.configure(level)


def logger() -> logging.Logger:
    return logging.getLogger(LOGGER_NAME)
