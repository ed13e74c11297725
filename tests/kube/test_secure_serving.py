"""/metrics behind TokenReview and SubjectAccessReview: who gets 401, 403 and 200."""

from __future__ import annotations

import argparse
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from scheduler.kube.access_review import (
    AccessReviewer,
    Attributes,
    ReviewFailed,
    User,
    user_from_review,
)
from scheduler.kube.rest import ApiError
from scheduler.kube.secure_serving import (
    Endpoint,
    add_metrics_arguments,
    bearer_token,
    metrics_app,
    metrics_endpoint,
    serve,
    stop,
)

READER = User("system:serviceaccount:monitoring:prometheus", groups=("system:serviceaccounts",))
STRANGER = User("system:serviceaccount:default:default")


class Reviewer:
    """Knows two tokens; lets only the reader get /metrics."""

    def __init__(self) -> None:
        self.asked: list[Attributes] = []
        self.failing = False

    async def authenticate(self, token: str) -> User | None:
        if self.failing:
            raise ReviewFailed("the API server is down")
        return {"reader-token": READER, "stranger-token": STRANGER}.get(token)

    async def authorize(self, user: User, attributes: Attributes) -> bool:
        self.asked.append(attributes)
        return user == READER and attributes == Attributes(verb="get", path="/metrics")


async def get(app: Any, token: str | None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with TestClient(TestServer(app, host="127.0.0.1")) as http:
        reply = await http.get("/metrics", headers=headers)
        return reply.status, await reply.text()


@pytest.mark.parametrize(
    ("token", "status", "says"),
    [
        (None, 401, "Unauthorized: no bearer token"),
        ("forged", 401, "Unauthorized: the token is not valid"),
        (
            "stranger-token",
            403,
            "Forbidden: user system:serviceaccount:default:default may not get /metrics",
        ),
        ("reader-token", 200, "kueue_series 1"),
    ],
)
async def test_only_an_allowed_identity_reads_metrics(
    token: str | None, status: int, says: str
) -> None:
    reviewer = Reviewer()
    app = metrics_app(lambda: b"kueue_series 1\n", reviewer)
    assert await get(app, token) == (status, says + "\n" if status != 200 else says + "\n")


async def test_a_failed_review_lets_nothing_through() -> None:
    reviewer = Reviewer()
    reviewer.failing = True
    status, text = await get(metrics_app(lambda: b"secret 1\n", reviewer), "reader-token")
    assert status == 500 and "secret" not in text


async def test_plain_metrics_need_no_token() -> None:
    assert await get(metrics_app(lambda: b"x 1\n", None), None) == (200, "x 1\n")


def test_bearer_token_parsing() -> None:
    assert bearer_token("Bearer abc") == "abc"
    assert bearer_token("bearer  abc ") == "abc"
    assert bearer_token("Basic abc") is None
    assert bearer_token("Bearer ") is None
    assert bearer_token(None) is None


def flags(*argv: str) -> Endpoint | None | str:
    parser = argparse.ArgumentParser()
    add_metrics_arguments(parser, default_address="127.0.0.1:8443")
    return metrics_endpoint(parser.parse_args(list(argv)))


def test_plain_http_only_on_loopback() -> None:
    assert flags() == Endpoint("127.0.0.1", 8443)
    assert flags("--metrics-bind-address", ":8443") == Endpoint("0.0.0.0", 8443)
    assert flags("--metrics-bind-address", "") is None
    assert flags("--no-metrics-secure") == Endpoint("127.0.0.1", 8443, secure=False)
    assert flags("--no-metrics-secure", "--metrics-bind-address", "[::1]:9") == Endpoint(
        "::1", 9, secure=False
    )
    refused = flags("--no-metrics-secure", "--metrics-bind-address", "0.0.0.0:8443")
    assert isinstance(refused, str) and "loopback" in refused
    assert isinstance(flags("--metrics-bind-address", "nowhere"), str)


async def test_https_with_a_self_signed_pair_when_no_certificate_is_given() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = await serve(
        metrics_app(lambda: b"x 1\n", Reviewer()), Endpoint("127.0.0.1", port), name="test"
    )
    try:
        unverified = ssl.create_default_context()
        unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
        headers = {"Authorization": "Bearer reader-token"}
        async with aiohttp.ClientSession() as session:
            async with session.get(
                f"https://127.0.0.1:{port}/metrics", ssl=unverified, headers=headers
            ) as reply:
                assert (reply.status, await reply.text()) == (200, "x 1\n")
            with pytest.raises(aiohttp.ClientError):
                async with session.get(f"http://127.0.0.1:{port}/metrics"):
                    pass
    finally:
        await stop(*started)


class Api:
    """The two review endpoints of an API server, counting the questions."""

    def __init__(self, *, down: bool = False) -> None:
        self.calls: list[str] = []
        self.down = down

    async def create(
        self, path: str, body: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        self.calls.append(path.rsplit("/", 1)[1])
        if self.down:
            raise ApiError("service unavailable", status=503)
        if body["kind"] == "TokenReview":
            known = body["spec"]["token"] == "good"
            user = {"username": "u", "uid": "1", "groups": ["g"], "extra": {"k": ["v"]}}
            return {"status": {"authenticated": known, **({"user": user} if known else {})}}
        spec = body["spec"]
        allowed = spec["user"] == "u" and spec.get("nonResourceAttributes") == {
            "path": "/metrics",
            "verb": "get",
        }
        return {"status": {"allowed": allowed}}


async def test_reviews_are_asked_once_and_cached() -> None:
    now = [0.0]
    api = Api()
    reviewer = AccessReviewer(api, clock=lambda: now[0])  # type: ignore[arg-type]
    user = await reviewer.authenticate("good")
    assert user == User("u", "1", ("g",), {"k": ("v",)})
    assert await reviewer.authenticate("good") == user
    assert await reviewer.authenticate("bad") is None
    metrics = Attributes(verb="get", path="/metrics")
    queues = Attributes(verb="list", group="kueue.x-k8s.io", resource="clusterqueues")
    assert user is not None
    assert await reviewer.authorize(user, metrics)
    assert await reviewer.authorize(user, metrics)
    assert not await reviewer.authorize(user, queues)
    assert api.calls == ["tokenreviews", "tokenreviews", "subjectaccessreviews"] + [
        "subjectaccessreviews"
    ]
    now[0] = 1000.0
    assert await reviewer.authorize(user, metrics)
    assert api.calls[-1] == "subjectaccessreviews", "expired: asked again"


async def test_an_unreachable_api_server_is_a_failed_review() -> None:
    reviewer = AccessReviewer(Api(down=True))  # type: ignore[arg-type]
    with pytest.raises(ReviewFailed, match="service unavailable"):
        await reviewer.authenticate("good")


def test_review_spec_for_resources_and_paths() -> None:
    user = User("u", "1", ("g",), {"k": ("v",)})
    spec = Attributes(
        verb="list", group="kueue.x-k8s.io", resource="workloads", namespace="ml"
    ).review_spec(user)
    assert spec == {
        "user": "u",
        "uid": "1",
        "groups": ["g"],
        "extra": {"k": ["v"]},
        "resourceAttributes": {
            "verb": "list",
            "group": "kueue.x-k8s.io",
            "resource": "workloads",
            "namespace": "ml",
        },
    }
    assert user_from_review({"authenticated": False}) is None


def test_path_is_accepted(tmp_path: Path) -> None:
    """A cert dir is kept as given (its files are read when serving starts)."""
    assert flags("--metrics-cert-dir", str(tmp_path)) == Endpoint(
        "127.0.0.1", 8443, cert_dir=tmp_path
    )
