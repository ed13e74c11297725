"""Owner references from the run-time objects (Lease, certificate Secret) to a Deployment."""

from __future__ import annotations

import pytest

from scheduler.kube.ownership import DEPLOYMENTS, LEASES, adopt_lease, with_owner
from scheduler.kube.rest import Conflict, NotFound
from tests.kube.fake_api import FakeApi

NAMESPACE = "kueue-system"
LEASE = LEASES.object_path("kuota-scheduler", namespace=NAMESPACE)
DEPLOYMENT = DEPLOYMENTS.object_path("kuota-scheduler", namespace=NAMESPACE)


def cluster() -> FakeApi:
    api = FakeApi()
    api.put(DEPLOYMENT, {"metadata": {"name": "kuota-scheduler", "uid": "d-1"}})
    api.put(
        LEASE,
        {
            "metadata": {"name": "kuota-scheduler", "namespace": NAMESPACE},
            "spec": {"holderIdentity": "replica-0", "leaseDurationSeconds": 15},
        },
    )
    return api


async def test_the_lease_gets_one_reference_to_the_deployment_and_keeps_its_spec() -> None:
    api = cluster()
    assert await adopt_lease(api, NAMESPACE, "kuota-scheduler", "kuota-scheduler")
    lease = api.store[LEASE]
    assert lease["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "kuota-scheduler", "uid": "d-1"}
    ]
    assert lease["spec"]["holderIdentity"] == "replica-0", "only metadata is patched"
    assert lease["metadata"]["name"] == "kuota-scheduler"
    assert not await adopt_lease(api, NAMESPACE, "kuota-scheduler", "kuota-scheduler"), (
        "a second term adds nothing"
    )
    assert len(api.store[LEASE]["metadata"]["ownerReferences"]) == 1


async def test_the_patch_is_refused_if_the_lease_moved_since_it_was_read() -> None:
    api = cluster()
    original_get = api.get

    async def get_then_renew(path: str, **kwargs: object) -> dict[str, object]:
        read = await original_get(path)
        if path == LEASE:  # the holder renews between our read and our patch
            api.put(LEASE, {**api.store[LEASE], "spec": {"holderIdentity": "replica-0"}})
        return read

    api.get = get_then_renew  # type: ignore[method-assign]
    with pytest.raises(Conflict):
        await adopt_lease(api, NAMESPACE, "kuota-scheduler", "kuota-scheduler")
    assert "ownerReferences" not in api.store[LEASE]["metadata"]


async def test_a_missing_deployment_is_an_error_not_a_reference_without_uid() -> None:
    api = cluster()
    del api.store[DEPLOYMENT]
    with pytest.raises(NotFound):
        await adopt_lease(api, NAMESPACE, "kuota-scheduler", "kuota-scheduler")


def test_other_owners_are_kept() -> None:
    other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "c-1"}
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "d-1"}
    assert with_owner([other], owner) == [other, owner]  # type: ignore[list-item]
    assert with_owner([other, owner], owner) is None  # type: ignore[list-item]
