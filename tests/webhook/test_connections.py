"""The connection bound's policy (webhook/connections.py): which connection makes room.

Connections here are real sockets (one end of a socketpair) on a virtual
clock, so "quiet for how long" is exact.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from webhook.connections import (
    MIN_QUIET_SECONDS,
    STALE_REQUEST_SECONDS,
    Connection,
    ConnectionPool,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    made: list[socket.socket] = []
    yield made
    for item in made:
        item.close()


def new_socket(sockets: list[socket.socket]) -> socket.socket:
    ours, theirs = socket.socketpair()
    sockets += [ours, theirs]
    return ours


async def run_request(pool: ConnectionPool, connection: Connection, **during: Any) -> None:
    """One request through the pool's middleware on ``connection``; ``during`` runs inside."""
    protocol = mock.Mock()  # stands for aiohttp's per-connection protocol object
    pool.bind(connection, protocol)
    request = make_mocked_request("POST", "/mutate-batch-v1-job", protocol=protocol)

    async def handler(_: web.Request) -> web.StreamResponse:
        if "check" in during:
            during["check"]()
        return web.Response()

    await pool.middleware()(request, handler)


def test_below_the_limit_nothing_is_closed(sockets: list[socket.socket]) -> None:
    pool = ConnectionPool(3, clock=Clock())
    opened = [pool.admit(new_socket(sockets)) for _ in range(3)]
    assert pool.open_count() == 3 and not any(c.closed for c in opened) and pool.evicted == 0


def test_at_the_limit_the_quietest_connection_makes_room(sockets: list[socket.socket]) -> None:
    clock = Clock()
    evictions: list[None] = []
    pool = ConnectionPool(2, clock=clock, on_evict=lambda: evictions.append(None))
    first = pool.admit(new_socket(sockets))
    clock.now += 1
    second = pool.admit(new_socket(sockets))
    clock.now += 1
    third = pool.admit(new_socket(sockets))
    assert first.closed and not second.closed and not third.closed
    assert pool.open_count() == 2 and pool.evicted == 1 and len(evictions) == 1


def test_a_connection_quiet_for_less_than_a_second_is_not_closed(
    sockets: list[socket.socket],
) -> None:
    # Closing a keep-alive connection its client has just picked loses that request
    # (kube-apiserver does not retry a POST): the newcomer waits instead.
    clock = Clock()
    pool = ConnectionPool(1, clock=clock)
    recent = pool.admit(new_socket(sockets))
    clock.now += MIN_QUIET_SECONDS / 2
    assert not pool.has_room()
    clock.now += MIN_QUIET_SECONDS / 2
    assert pool.has_room()
    pool.admit(new_socket(sockets))
    assert recent.closed and pool.open_count() == 1


async def test_a_request_makes_a_connection_recent(sockets: list[socket.socket]) -> None:
    clock = Clock()
    pool = ConnectionPool(2, clock=clock)
    first = pool.admit(new_socket(sockets))
    clock.now += 1
    second = pool.admit(new_socket(sockets))
    clock.now += 1
    await run_request(pool, first)  # the oldest connection just served a request
    clock.now += 1
    pool.admit(new_socket(sockets))
    assert second.closed and not first.closed


async def test_a_request_in_progress_is_never_cut(sockets: list[socket.socket]) -> None:
    clock = Clock()
    pool = ConnectionPool(1, clock=clock)
    busy = pool.admit(new_socket(sockets))
    seen: dict[str, object] = {}

    def check() -> None:
        clock.now += STALE_REQUEST_SECONDS - 1
        seen["room"] = pool.has_room()
        seen["admitted"] = pool.admit(new_socket(sockets))
        seen["busy_closed"] = busy.closed
        seen["open"] = pool.open_count()

    await run_request(pool, busy, check=check)
    assert seen == {"room": False, "admitted": seen["admitted"], "busy_closed": False, "open": 2}, (
        "no room while every connection is mid-request; admitted anyway it passes the bound by one"
    )
    assert not pool.has_room(), "the request just ended: its client may send the next one"
    clock.now += MIN_QUIET_SECONDS
    assert pool.has_room(), "quiet for a second now: it may be closed to make room"


async def test_a_request_nobody_waits_for_any_more_is_cut(sockets: list[socket.socket]) -> None:
    clock = Clock()
    pool = ConnectionPool(1, clock=clock)
    stuck = pool.admit(new_socket(sockets))
    seen: dict[str, bool] = {}

    def check() -> None:
        clock.now += STALE_REQUEST_SECONDS
        seen["room"] = pool.has_room()
        pool.admit(new_socket(sockets))
        seen["stuck_closed"] = stuck.closed

    await run_request(pool, stuck, check=check)
    assert seen == {"room": True, "stuck_closed": True}


def test_a_closed_connection_leaves_the_count(sockets: list[socket.socket]) -> None:
    pool = ConnectionPool(2, clock=Clock())
    gone = pool.admit(new_socket(sockets))
    pool.admit(new_socket(sockets))
    gone.socket.close()  # what asyncio does when the connection is lost
    assert pool.open_count() == 1 and pool.has_room()


def test_handshaking_connections_count_and_go_when_the_listener_stops(
    sockets: list[socket.socket],
) -> None:
    pool = ConnectionPool(5, clock=Clock())
    waiting = [pool.admit(new_socket(sockets)) for _ in range(3)]
    assert pool.open_count() == 3
    pool.abort_handshakes()
    assert all(c.closed for c in waiting) and pool.open_count() == 0


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ConnectionPool(0)
