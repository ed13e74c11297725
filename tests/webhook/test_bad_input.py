"""Bad input is a clear answer, never a 500 and never a crash (docs/validation.md#error-format).

Malformed requests get HTTP 400 with a reason; well-formed reviews of odd
objects get a well-formed AdmissionReview answer.  The hypothesis test throws
arbitrary bodies — random bytes, random JSON, reviews with random objects —
at every endpoint of one running app and checks after each that the server
still answers a proper request.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from webhook.routes import CONVERT, admission_endpoints

from .conftest import post_review
from .reviews import QUEUE, admission_review, job

ENDPOINTS = sorted(admission_endpoints()) + [CONVERT]


async def expect_400(client: Any, path: str, data: bytes, reason: str) -> None:
    # A stream, not raw bytes: aiohttp warns that a large bytes body blocks the loop.
    reply = await client.post(
        path, data=io.BytesIO(data), headers={"Content-Type": "application/json"}
    )
    assert reply.status == 400, await reply.text()
    body = await reply.json()
    assert body["code"] == 400 and reason in body["message"], body


async def test_a_body_that_is_not_an_admission_review(webhook: Any) -> None:
    await expect_400(
        webhook,
        "/mutate-batch-v1-job",
        b'{"kind": "Pod", "apiVersion": "v1"}',
        "expected kind AdmissionReview",
    )
    await expect_400(
        webhook, "/mutate-batch-v1-job", b"[1, 2]", "expected a JSON object of kind AdmissionReview"
    )
    old = admission_review(job())
    old["apiVersion"] = "admission.k8s.io/v1beta1"
    await expect_400(
        webhook, "/mutate-batch-v1-job", json.dumps(old).encode(), "admissionReviewVersions: [v1]"
    )


async def test_truncated_and_empty_json(webhook: Any) -> None:
    whole = json.dumps(admission_review(job(labels={QUEUE: "q"}))).encode()
    await expect_400(
        webhook, "/mutate-batch-v1-job", whole[: len(whole) // 2], "request body is not valid JSON"
    )
    await expect_400(webhook, "/validate-batch-v1-job", b"", "empty request body")
    await expect_400(webhook, "/convert", b"\xff\xfe\x00", "not")


async def test_a_ten_megabyte_body(webhook: Any) -> None:
    huge = admission_review(job(annotations={"padding": "x" * (10 * 1024 * 1024)}))
    await expect_400(
        webhook, "/mutate-batch-v1-job", json.dumps(huge).encode(), "larger than the limit"
    )
    assert (await post_review(webhook, "/mutate-batch-v1-job", admission_review(job())))[
        "allowed"
    ] is True


async def test_an_unknown_kind_or_version(webhook: Any) -> None:
    pod = admission_review(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"}}
    )
    await expect_400(
        webhook,
        "/mutate-batch-v1-job",
        json.dumps(pod).encode(),
        "this endpoint serves batch/v1 Job",
    )
    future = {"apiVersion": "kueue.x-k8s.io/v9", "kind": "ClusterQueue", "metadata": {"name": "cq"}}
    await expect_400(
        webhook,
        "/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
        json.dumps(admission_review(future)).encode(),
        "kuota does not serve apiVersion 'kueue.x-k8s.io/v9'",
    )


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "batch/v1", "kind": "Job"},
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "labels": {QUEUE: "q"}},
        },
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"labels": None}, "spec": None},
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"labels": {QUEUE: 7}},
            "spec": {"suspend": "yes"},
        },
    ],
)
async def test_a_job_with_missing_or_odd_fields_gets_a_well_formed_answer(
    webhook: Any, obj: dict[str, Any]
) -> None:
    for path in ("/mutate-batch-v1-job", "/validate-batch-v1-job"):
        response = await post_review(webhook, path, admission_review(obj, namespace="team-a"))
        assert isinstance(response["allowed"], bool)
        assert response.get("status", {}).get("reason") != "InternalError"


async def test_a_job_without_a_namespace_is_400(webhook: Any) -> None:
    await expect_400(
        webhook,
        "/mutate-batch-v1-job",
        json.dumps(
            admission_review({"apiVersion": "batch/v1", "kind": "Job", "metadata": {}})
        ).encode(),
        "request.namespace is missing",
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
object_fields = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.sampled_from(
            ["batch/v1", "kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1alpha1", "v1"]
        )
        | st.text(max_size=8),
        "kind": st.sampled_from(
            ["Job", "ClusterQueue", "ResourceFlavor", "LocalQueue", "Workload", "Cohort"]
        )
        | st.text(max_size=8),
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "name": st.text(max_size=10),
                "namespace": st.sampled_from(["team-a", ""]),
                "labels": st.dictionaries(st.sampled_from([QUEUE, "a"]), json_values, max_size=2)
                | json_values,
                "annotations": json_values,
                "ownerReferences": json_values,
                "finalizers": json_values,
            },
        )
        | json_values,
        "spec": json_values,
    },
)


def review_bodies() -> st.SearchStrategy[bytes]:
    reviews = st.builds(
        lambda obj, old, op, ns: admission_review(
            obj if isinstance(obj, dict) else None,
            operation=op,
            old=old if isinstance(old, dict) else None,
            namespace=ns,
        ),
        object_fields,
        st.none() | object_fields,
        st.sampled_from(["CREATE", "UPDATE", "DELETE"]),
        st.sampled_from(["team-a", None]),
    )
    conversions = st.builds(
        lambda objs, v: {
            "kind": "ConversionReview",
            "apiVersion": "apiextensions.k8s.io/v1",
            "request": {"uid": "u", "desiredAPIVersion": v, "objects": objs},
        },
        st.lists(object_fields, max_size=2),
        st.sampled_from(["kueue.x-k8s.io/v1alpha1", "kueue.x-k8s.io/v1beta2", "x"]),
    )
    documents = reviews | conversions | json_values
    return documents.map(lambda doc: json.dumps(doc).encode()) | st.binary(max_size=64)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=review_bodies(), endpoint=st.sampled_from(ENDPOINTS))
async def test_fuzzed_bodies_never_get_a_500_and_the_server_keeps_serving(
    webhook: Any, body: bytes, endpoint: str
) -> None:
    reply = await webhook.post(endpoint, data=body, headers={"Content-Type": "application/json"})
    assert reply.status in (200, 400), f"{reply.status}: {await reply.text()}"
    answer = await reply.json()
    if reply.status == 200:
        response = answer["response"]
        if endpoint != CONVERT:
            assert isinstance(response["allowed"], bool)
            assert response.get("status", {}).get("reason") != "InternalError", response
        else:
            assert response["result"]["status"] in ("Success", "Failure")
    else:
        assert answer["message"]
    healthy = await post_review(
        webhook, "/mutate-batch-v1-job", admission_review(job(labels={QUEUE: "q"}))
    )
    assert healthy["allowed"] is True and healthy["patchType"] == "JSONPatch"
