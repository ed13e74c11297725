"""RBAC decides through SubjectAccessReviews; an allowed answer is remembered briefly."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.kube.rest import Unreachable
from scheduler.visibility.access import AccessReviewer, Question, review_body
from scheduler.visibility.identity import User
from scheduler.visibility.wire import CLUSTER_QUEUES, LOCAL_QUEUES
from tests.clock import FakeClock

ALICE = User("alice", ("team", "system:authenticated"), uid="7", extra=(("scopes", ("a",)),))
CQ = Question(CLUSTER_QUEUES, "v1beta2", "cq", namespace=None)
LQ = Question(LOCAL_QUEUES, "v1beta1", "lq", namespace="team")


class Reviews:
    """Answers SubjectAccessReviews from a set of allowed (user, resource, namespace)."""

    def __init__(self) -> None:
        self.allowed: set[tuple[str, str, str | None]] = set()
        self.asked: list[dict[str, Any]] = []
        self.down = False

    async def create(self, path: str, body: dict[str, Any], *, timeout: float | None = None) -> Any:
        assert path == "/apis/authorization.k8s.io/v1/subjectaccessreviews"
        if self.down:
            raise Unreachable("no answer")
        self.asked.append(body)
        spec = body["spec"]
        attributes = spec["resourceAttributes"]
        key = (spec["user"], attributes["resource"], attributes.get("namespace"))
        return {
            "status": {
                "allowed": key in self.allowed,
                "reason": "" if key in self.allowed else "no",
            }
        }


def test_the_review_names_the_subresource_and_the_whole_identity() -> None:
    assert review_body(ALICE, LQ)["spec"] == {
        "user": "alice",
        "groups": ["team", "system:authenticated"],
        "uid": "7",
        "extra": {"scopes": ["a"]},
        "resourceAttributes": {
            "verb": "get",
            "group": "visibility.kueue.x-k8s.io",
            "version": "v1beta1",
            "resource": "localqueues",
            "subresource": "pendingworkloads",
            "name": "lq",
            "namespace": "team",
        },
    }
    assert "namespace" not in review_body(User("bob"), CQ)["spec"]["resourceAttributes"]


async def test_allowed_answers_are_remembered_for_two_seconds_and_denials_never() -> None:
    reviews, clock = Reviews(), FakeClock()
    reviewer = AccessReviewer(reviews, clock=clock.monotonic)  # type: ignore[arg-type]
    denied = await reviewer.decide(ALICE, CQ)
    assert (denied.allowed, denied.reason) == (False, "no")
    reviews.allowed.add(("alice", "clusterqueues", None))
    assert (await reviewer.decide(ALICE, CQ)).allowed  # the binding counts at once
    reviews.allowed.clear()
    clock.advance(1.9)
    assert (await reviewer.decide(ALICE, CQ)).allowed  # remembered
    clock.advance(0.2)
    assert not (await reviewer.decide(ALICE, CQ)).allowed  # asked again
    assert reviewer.reviews == len(reviews.asked) == 3


async def test_no_answer_is_an_error_not_a_permission() -> None:
    reviews = Reviews()
    reviews.down = True
    reviewer = AccessReviewer(reviews, clock=FakeClock().monotonic)  # type: ignore[arg-type]
    with pytest.raises(Unreachable):
        await reviewer.decide(ALICE, LQ)
