"""kuota's own kinds: the webhook's denial is ``kuota validate``'s message, byte for byte."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from scheduler.api.pipeline import review
from scheduler.api.validation import admission_status
from tests.api.seed_examples import documents

from .conftest import patch_of, post_review
from .reviews import admission_review

KUEUE = "kueue.x-k8s.io"
SEEDS = [doc for doc in documents() if doc.api_version.startswith(f"{KUEUE}/")]


def validate_path(kind: str) -> str:
    return f"/validate-kueue-x-k8s-io-v1beta2-{kind.lower()}"


def with_namespace(raw: dict[str, Any], kind: str) -> dict[str, Any]:
    body = copy.deepcopy(raw)
    if kind in ("LocalQueue", "Workload"):
        body["metadata"].setdefault("namespace", "team-a")
    return body


@pytest.mark.parametrize(
    "seed", SEEDS, ids=lambda s: f"{s.api_version.split('/')[1]}:{s.kind}:{s.line}"
)
async def test_every_seed_gets_the_answer_of_kuota_validate(webhook: Any, seed: Any) -> None:
    body = with_namespace(seed.raw, seed.kind)
    expected = review(body)
    response = await post_review(webhook, validate_path(seed.kind), admission_review(body))
    assert response["allowed"] is expected.valid
    if not expected.valid:
        assert response["status"] == dict(admission_status(expected.errors))


async def test_an_invalid_cluster_queue_names_the_field(webhook: Any) -> None:
    cq = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "-1"}]}
                    ],
                }
            ]
        },
    }
    response = await post_review(webhook, validate_path("ClusterQueue"), admission_review(cq))
    assert response["allowed"] is False
    assert response["status"]["message"] == (
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: "
        "must be greater than or equal to 0, got -1"
    )


async def test_a_legacy_object_is_judged_by_the_legacy_rules_first(webhook: Any) -> None:
    legacy = {
        "apiVersion": f"{KUEUE}/v1alpha1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "resources": [
                {"name": "cpu", "flavors": [{"name": "on_demand", "quota": {"min": "1"}}]}
            ]
        },
    }
    response = await post_review(webhook, validate_path("ClusterQueue"), admission_review(legacy))
    assert response["status"]["code"] == 422
    assert response["status"]["message"].startswith(
        'spec.resources[0].flavors[0].name: "on_demand" is not a valid flavor name'
    )


async def test_updates_are_validated_against_the_old_object(webhook: Any) -> None:
    old = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": {"clusterQueue": "a"},
    }
    new = copy.deepcopy(old)
    new["spec"]["clusterQueue"] = "b"
    response = await post_review(
        webhook, validate_path("LocalQueue"), admission_review(new, operation="UPDATE", old=old)
    )
    expected = review(new, old=old, operation="UPDATE")
    assert response["allowed"] is expected.valid
    if not expected.valid:
        assert response["status"]["message"] == admission_status(expected.errors)["message"]


@pytest.mark.parametrize("version", ["v1beta2", "v1alpha1"])
async def test_create_adds_the_resource_in_use_finalizer(webhook: Any, version: str) -> None:
    flavor = {
        "apiVersion": f"{KUEUE}/{version}",
        "kind": "ResourceFlavor",
        "metadata": {"name": "spot"},
    }
    response = await post_review(
        webhook, "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor", admission_review(flavor)
    )
    result = jsonpatch.apply_patch(flavor, patch_of(response))
    assert result["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
    assert result["apiVersion"] == f"{KUEUE}/{version}", "the version is never changed by a patch"
    again = await post_review(
        webhook, "/mutate-kueue-x-k8s-io-v1beta2-resourceflavor", admission_review(result)
    )
    assert "patch" not in again


async def test_an_endpoint_refuses_another_kind_with_400(webhook: Any) -> None:
    flavor = {
        "apiVersion": f"{KUEUE}/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "spot"},
    }
    reply = await webhook.post(validate_path("ClusterQueue"), json=admission_review(flavor))
    assert reply.status == 400
    assert (
        "this endpoint serves ClusterQueue, got 'ResourceFlavor'" in (await reply.json())["message"]
    )
