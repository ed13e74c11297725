"""Polling helpers for end-to-end tests: wait for a condition with a deadline,
never a fixed sleep, and say what was last seen when time runs out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T]],
    accept: Callable[[T], bool],
    *,
    timeout: float,
    what: str,
    interval: float = 0.5,
) -> T:
    """Call ``probe`` until ``accept`` holds for its result; fail with the last result."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while True:
        last = await probe()
        if accept(last):
            return last
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:.0f}s waiting for {what}; last seen: {last!r}"
            )
        await asyncio.sleep(interval)
