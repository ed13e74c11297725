"""How fast the REST layer (:mod:`scheduler.kube.rest`) asks the API server.

Requests are rate-limited on the client, as client-go limits Kueue's: a
:class:`TokenBucket` of ``qps`` tokens a second holding at most ``burst``
(the Configuration's ``clientConnection``: :func:`rate_limiter`), shared by
every request of one :class:`~scheduler.kube.rest.Rest`.  A request that
waits for its token has that much less of its ``timeout``: a fenced write's
deadline (its client timeout and the API server's ``timeout`` parameter)
still ends where the fence said, and a write whose deadline passed while it
waited is not sent.

The server may ask for less too: a 429 that says when to come back
(``Retry-After``: API priority and fairness, or a watch cache still
initializing) is asked again then (:func:`retry_after`), at most
:data:`RETRIES_AFTER_429` times, each wait at most :data:`MAX_RETRY_AFTER`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

RETRIES_AFTER_429 = 5
"""How often a 429 with ``Retry-After`` is asked again (client-go: 10, for every caller)."""
MAX_RETRY_AFTER = 5.0
"""The longest wait one ``Retry-After`` buys, in seconds."""


def retry_after(status: int, header: str | None) -> float | None:
    """Seconds to wait before asking again, for a 429 that says so: pure; None: do not retry."""
    if status != 429 or header is None:
        return None
    try:
        seconds = float(header)
    except ValueError:
        return None  # an HTTP date: not sent by kube-apiserver
    return max(seconds, 0.0)


class TokenBucket:
    """client-go's token-bucket rate limiter: ``qps`` tokens a second, at most ``burst`` kept.

    The bucket starts full; a request takes one token, waiting until one is
    there.  Requests are served in the order they asked.
    """

    def __init__(
        self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if qps <= 0:
            raise ValueError("qps must be greater than 0 (a negative qps means no limiter)")
        self.qps = qps
        self.burst = max(1, burst)
        self.clock = clock
        self._tokens = float(self.burst)
        self._last = clock()
        self._turn = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now

    async def acquire(self) -> float:
        """Take a token, waiting for it if need be; the seconds waited."""
        started = self.clock()
        async with self._turn:
            self._refill()
            if self._tokens < 1:
                await asyncio.sleep((1 - self._tokens) / self.qps)
                self._refill()
            self._tokens -= 1
        return max(0.0, self.clock() - started)


def rate_limiter(qps: float | None, burst: int | None) -> TokenBucket | None:
    """The limiter of ``clientConnection`` (None, 0: Kueue's 300 and 500; negative qps: none)."""
    rate = qps or KUEUE_QPS
    if rate < 0:
        return None
    return TokenBucket(rate, burst or KUEUE_BURST)


KUEUE_QPS = 300.0
KUEUE_BURST = 500
"""Kueue's defaults of ``clientConnection.qps`` and ``.burst``."""


__all__ = [
    "KUEUE_BURST",
    "KUEUE_QPS",
    "MAX_RETRY_AFTER",
    "RETRIES_AFTER_429",
    "TokenBucket",
    "rate_limiter",
    "retry_after",
]
