"""The ConversionReview endpoint: every version pair through the API layer's conversion."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.api.convert import convert_with_warnings
from tests.api.seed_examples import documents

from .reviews import conversion_review

KUEUE = "kueue.x-k8s.io"
CONVERTIBLE = [
    doc
    for doc in documents()
    if doc.api_version.startswith(f"{KUEUE}/")
    and doc.kind in ("ClusterQueue", "ResourceFlavor", "LocalQueue", "Workload")
]


async def convert(client: Any, objects: list[Any], desired: str) -> dict[str, Any]:
    body = conversion_review(objects, desired)
    reply = await client.post("/convert", json=body)
    assert reply.status == 200, await reply.text()
    answer = await reply.json()
    assert (
        answer["kind"] == "ConversionReview" and answer["response"]["uid"] == body["request"]["uid"]
    )
    return answer["response"]


@pytest.mark.parametrize(
    "seed", CONVERTIBLE, ids=lambda s: f"{s.api_version.split('/')[1]}:{s.kind}:{s.line}"
)
async def test_a_seed_goes_to_the_hub_and_back(webhook: Any, seed: Any) -> None:
    raw = dict(seed.raw, metadata={**seed.raw["metadata"], "uid": "u-1", "resourceVersion": "7"})
    up = await convert(webhook, [raw], f"{KUEUE}/v1beta2")
    assert up["result"] == {"status": "Success"}, up["result"]
    hub = up["convertedObjects"][0]
    assert hub["apiVersion"] == f"{KUEUE}/v1beta2"
    assert hub["metadata"]["uid"] == "u-1" and hub["metadata"]["resourceVersion"] == "7"
    assert hub == convert_with_warnings(raw, "v1beta2", check=False).object
    back = await convert(webhook, [hub], seed.api_version)
    assert back["result"] == {"status": "Success"}
    assert back["convertedObjects"][0]["apiVersion"] == seed.api_version


async def test_every_version_pair_is_served(webhook: Any) -> None:
    flavor = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "spot"},
        "spec": {"nodeLabels": {"instance-type": "spot"}},
    }
    for source in ("v1alpha1", "v1alpha2", "v1beta1", "v1beta2"):
        start = (await convert(webhook, [flavor], f"{KUEUE}/{source}"))["convertedObjects"][0]
        for target in ("v1alpha1", "v1alpha2", "v1beta1", "v1beta2"):
            converted = (await convert(webhook, [start], f"{KUEUE}/{target}"))["convertedObjects"][
                0
            ]
            assert converted["apiVersion"] == f"{KUEUE}/{target}"
            assert converted["metadata"]["name"] == "spot"


async def test_an_object_that_cannot_be_converted_fails_the_review_with_its_name(
    webhook: Any,
) -> None:
    cohort = {"apiVersion": f"{KUEUE}/v1beta2", "kind": "Cohort", "metadata": {"name": "c"}}
    response = await convert(webhook, [cohort], f"{KUEUE}/v1alpha1")
    assert response["result"]["status"] == "Failure"
    assert response["result"]["message"].startswith("Cohort 'c': kind: ")
    assert "convertedObjects" not in response


async def test_a_malformed_conversion_review_is_400(webhook: Any) -> None:
    reply = await webhook.post(
        "/convert", json={"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1beta1"}
    )
    assert reply.status == 400
    assert "conversionReviewVersions: [v1]" in (await reply.json())["message"]
