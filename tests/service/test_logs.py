"""The one JSON log format of kuota's processes, and its context."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import Any

from scheduler import logs


def capture() -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.JsonFormatter())
    logger = logging.getLogger(f"kuota.test.{id(stream)}")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger, stream


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_line_has_time_level_logger_message_context_and_extras_in_that_order() -> None:
    logger, stream = capture()
    with logs.bind(cycle=3):
        logger.info("admitted %s", "w", extra={"cluster_queue": "cq"})
    (line,) = lines(stream)
    assert list(line) == ["time", "level", "logger", "msg", "cycle", "cluster_queue"]
    assert line["level"] == "info" and line["msg"] == "admitted w"
    assert line["time"].endswith("+00:00")


def test_bound_context_nests_and_is_restored() -> None:
    logger, stream = capture()
    with logs.bind(cycle=1):
        with logs.bind(object="ml/a"):
            logger.info("inner")
        logger.info("outer")
    logger.info("after")
    inner, outer, after = lines(stream)
    assert (inner["cycle"], inner["object"]) == (1, "ml/a")
    assert "object" not in outer and outer["cycle"] == 1
    assert "cycle" not in after
    assert logs.context() == {}


async def test_context_follows_tasks_without_leaking_between_them() -> None:
    logger, stream = capture()

    async def act(key: str) -> None:
        with logs.bind(object=key):
            await asyncio.sleep(0)
            logger.info("acting")

    with logs.bind(cycle=9):
        await asyncio.gather(act("ml/a"), act("ml/b"))
    got = sorted((line["cycle"], line["object"]) for line in lines(stream))
    assert got == [(9, "ml/a"), (9, "ml/b")]


def test_the_webhook_context_mapping_is_flattened_and_tracebacks_are_kept() -> None:
    logger, stream = capture()
    logger.info("decision", extra={"context": {"endpoint": "/mutate", "uid": "u"}})
    try:
        raise ValueError("boom")
    except ValueError:
        logger.exception("failed", extra={"error": "a write failed"})
    decision, failed = lines(stream)
    assert decision["endpoint"] == "/mutate" and "context" not in decision
    assert failed["error"] == "a write failed", "an 'error' extra is not overwritten"
    assert "ValueError: boom" in failed["exception"]


def test_configure_sends_json_lines_and_quiets_chatty_libraries() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        logs.configure("warning", stream=stream)
        logging.getLogger("kuota.x").warning("careful")
        logging.getLogger("kuota.x").info("dropped")
        assert [line["msg"] for line in lines(stream)] == ["careful"]
        assert logging.getLogger("kubernetes_asyncio").level == logging.WARNING
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
