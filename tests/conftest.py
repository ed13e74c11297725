"""Fixtures every suite may use."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.clock import LoopTime


@pytest.fixture
async def loop_time() -> AsyncIterator[LoopTime]:
    """The test's event loop runs in virtual time (see ``tests/clock.py``)."""
    with LoopTime.installed(asyncio.get_running_loop()) as clock:
        yield clock


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """For tests that run a process's ``main``, which configures logging for the process:
    the root logger's handlers and levels are put back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in logging.root.manager.loggerDict}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, saved in levels.items():
        logging.getLogger(name).setLevel(saved)
