"""The visibility API's wire format: query bounds, JSON shapes and Kubernetes Status texts."""

from __future__ import annotations

import pytest

from scheduler.visibility import wire
from scheduler.visibility.wire import Page, PendingWorkload, page_of


@pytest.mark.parametrize(
    ("query", "page"),
    [
        ({}, Page(offset=0, limit=1000)),
        ({"limit": "0"}, Page(offset=0, limit=1000)),
        ({"limit": "-1"}, Page(offset=0, limit=0)),
        ({"limit": "2000000000"}, Page(offset=0, limit=100_000)),
        ({"limit": "+5", "offset": "-3"}, Page(offset=0, limit=5)),
        ({"limit": "2", "offset": "7"}, Page(offset=7, limit=2)),
    ],
)
def test_limit_and_offset_are_bounded_as_kueue_bounds_them(
    query: dict[str, str], page: Page
) -> None:
    assert page_of(query) == page


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"limit": "ten"}, 'limit: strconv.ParseInt: parsing "ten": invalid syntax'),
        ({"offset": "1.5"}, 'offset: strconv.ParseInt: parsing "1.5": invalid syntax'),
        ({"offset": "9" * 20}, "value out of range"),
    ],
)
def test_a_query_that_is_not_an_integer_is_a_bad_request(
    query: dict[str, str], message: str
) -> None:
    with pytest.raises(wire.BadRequest, match=message.replace("(", r"\(").replace(".", r"\.")):
        page_of(query)


def test_a_summary_is_kueues_json_with_owners_reduced_to_their_identity() -> None:
    item = PendingWorkload(
        name="job-a-1",
        namespace="team",
        creation_timestamp="2026-01-01T00:00:00Z",
        owner_references=(
            {"apiVersion": "batch/v1", "kind": "Job", "name": "a", "uid": "u", "controller": True},
        ),
        priority=100,
        local_queue="lq",
        position_in_cluster_queue=3,
        position_in_local_queue=1,
    )
    assert wire.summary("v1beta1", [item]) == {
        "kind": "PendingWorkloadsSummary",
        "apiVersion": "visibility.kueue.x-k8s.io/v1beta1",
        "metadata": {"creationTimestamp": None},
        "items": [
            {
                "metadata": {
                    "name": "job-a-1",
                    "namespace": "team",
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                    "ownerReferences": [
                        {"apiVersion": "batch/v1", "kind": "Job", "name": "a", "uid": "u"}
                    ],
                },
                "priority": 100,
                "localQueueName": "lq",
                "positionInClusterQueue": 3,
                "positionInLocalQueue": 1,
            }
        ],
    }
    bare = PendingWorkload("w", "ns", None, (), 0, "lq", 0, 0).json()
    assert "ownerReferences" not in bare["metadata"]


def test_errors_read_as_the_api_servers() -> None:
    assert wire.not_found(wire.LOCAL_QUEUES, "missing") == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'localqueue.visibility.kueue.x-k8s.io "missing" not found',
        "reason": "NotFound",
        "details": {"name": "missing", "group": "visibility.kueue.x-k8s.io", "kind": "localqueue"},
        "code": 404,
    }
    cluster = wire.forbidden(wire.CLUSTER_QUEUES, "cq", None, "system:serviceaccount:a:b", "")
    assert cluster["message"] == (
        'clusterqueues.visibility.kueue.x-k8s.io "cq" is forbidden: User'
        ' "system:serviceaccount:a:b" cannot get resource "clusterqueues/pendingworkloads" in API'
        ' group "visibility.kueue.x-k8s.io" at the cluster scope'
    )
    assert (cluster["code"], cluster["reason"]) == (403, "Forbidden")
    local = wire.forbidden(wire.LOCAL_QUEUES, "lq", "team", "alice", "no binding")
    assert local["message"].endswith(' in the namespace "team": no binding')
    assert wire.unauthorized()["code"] == 401
