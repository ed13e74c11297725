"""Fixtures every suite may use."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from tests.clock import LoopTime


@pytest.fixture
async def loop_time() -> AsyncIterator[LoopTime]:
    """The test's event loop runs in virtual time (see ``tests/clock.py``)."""
    with LoopTime.installed(asyncio.get_running_loop()) as clock:
        yield clock
