"""A webhook application per test, served by aiohttp's test client (no TLS, no cluster)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from webhook.app import create_app
from webhook.lookup import StaticLookup
from webhook.review import decode_patch
from webhook.settings import WebhookSettings

ClientFactory = Callable[..., Awaitable[TestClient[Any, Any]]]


@pytest.fixture
def lookup() -> StaticLookup:
    return StaticLookup()


@pytest.fixture
def make_client(aiohttp_client: Any, lookup: StaticLookup) -> ClientFactory:
    async def make(settings: WebhookSettings | None = None, **kwargs: Any) -> TestClient[Any, Any]:
        return await aiohttp_client(
            create_app(settings or WebhookSettings(), lookup=kwargs.pop("lookup", lookup), **kwargs)
        )

    return make


@pytest.fixture
async def webhook(make_client: ClientFactory) -> TestClient[Any, Any]:
    return await make_client()


async def post_review(client: TestClient[Any, Any], path: str, body: Any) -> dict[str, Any]:
    """POST a review; assert a well-formed 200 answer for the same uid; return ``response``."""
    reply = await client.post(path, json=body)
    assert reply.status == 200, await reply.text()
    answer = await reply.json()
    assert answer["apiVersion"] == body["apiVersion"] and answer["kind"] == body["kind"]
    assert answer["response"]["uid"] == body["request"]["uid"]
    return answer["response"]


def patch_of(response: dict[str, Any]) -> list[dict[str, Any]]:
    return decode_patch(response)
