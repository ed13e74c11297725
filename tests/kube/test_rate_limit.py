"""How fast the REST layer asks: the client's token bucket, the server's ``Retry-After``.

The bucket runs on a fake clock whose time passes only when someone waits;
what a request that waited does with its deadline is in ``test_rest.py``.
"""

from __future__ import annotations

import pytest

from scheduler.kube import rate_limit
from tests.clock import FakeClock


@pytest.mark.parametrize(
    ("code", "header", "wait"),
    [(429, "1", 1.0), (429, "0.5", 0.5), (429, None, None), (503, "1", None), (429, "soon", None)],
)
def test_which_answers_say_when_to_come_back(
    code: int, header: str | None, wait: float | None
) -> None:
    assert rate_limit.retry_after(code, header) == wait


async def test_the_token_bucket_serves_a_burst_then_qps(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:  # time passes only when someone waits
        slept.append(seconds)
        clock.advance(seconds)

    monkeypatch.setattr(rate_limit.asyncio, "sleep", sleep)
    bucket = rate_limit.TokenBucket(qps=2.0, burst=3, clock=clock.monotonic)
    waits = [await bucket.acquire() for _ in range(5)]
    assert waits[:3] == [0.0, 0.0, 0.0], "the bucket starts full"
    assert waits[3:] == pytest.approx([0.5, 0.5]), "then one token every 1/qps seconds"
    clock.advance(10)
    assert [await bucket.acquire() for _ in range(3)] == [0.0] * 3, "refilled, up to burst"
    assert await bucket.acquire() == pytest.approx(0.5)


def test_the_client_connection_section_gives_the_limiter() -> None:
    kueue = rate_limit.rate_limiter(None, None)
    assert kueue is not None and (kueue.qps, kueue.burst) == (300.0, 500), "Kueue's defaults"
    zero = rate_limit.rate_limiter(0, 0)
    assert zero is not None and (zero.qps, zero.burst) == (300.0, 500), "0 means the default"
    given = rate_limit.rate_limiter(5, 10)
    assert given is not None and (given.qps, given.burst) == (5.0, 10)
    assert rate_limit.rate_limiter(-1, 10) is None, "a negative qps: no client-side limit"
