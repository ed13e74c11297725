"""Tie the objects kuota creates at run time to a Deployment of its release.

Two objects are not in the chart because a process makes them while it runs:
the scheduler's leader-election Lease and the webhook certificate Secret of
``python -m certs bootstrap``.  Helm deletes only what it rendered, so after
``helm uninstall`` these two would stay behind.  Each process is told the
name of its own Deployment (``--owner-deployment``) and adds an owner
reference to it; when ``helm uninstall`` deletes the Deployment, the garbage
collector deletes the Lease and the Secret with it.

Without the flag (a process run outside the cluster, as in the local e2e
setup) nothing is adopted.  The reference has no ``blockOwnerDeletion``:
setting it would need permission to update the Deployment's finalizers, and
nothing has to wait for these objects to go.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from scheduler.api import objects
from scheduler.kube.rest import Resource, RestClient

log = logging.getLogger("kuota.ownership")
DEPLOYMENTS = Resource("apps", "v1", "deployments")


def deployment_reference(deployment: Mapping[str, Any]) -> objects.OwnerReference:
    """The owner reference that points at ``deployment`` (as read): pure."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": objects.name(deployment),
        "uid": objects.uid(deployment) or "",
    }


def with_owner(
    references: list[objects.OwnerReference], owner: objects.OwnerReference
) -> list[objects.OwnerReference] | None:
    """``references`` plus ``owner``; None when ``owner`` (by uid) is already there: pure."""
    if any(ref.get("uid") == owner["uid"] for ref in references):
        return None
    return [*references, owner]


async def read_deployment_reference(
    rest: RestClient, namespace: str, name: str
) -> objects.OwnerReference:
    """Read the Deployment ``namespace/name`` and return a reference to it."""
    deployment = await rest.get(DEPLOYMENTS.object_path(name, namespace=namespace))
    return deployment_reference(deployment)


async def adopt(
    rest: RestClient, path: str, obj: Mapping[str, Any], owner: objects.OwnerReference
) -> bool:
    """Add ``owner`` to the owner references of ``obj`` (read from ``path``); True if patched.

    The merge patch carries the resourceVersion as read, so it is refused
    (:class:`~scheduler.kube.rest.Conflict`) if the object moved meanwhile; the
    next attempt reads it again.
    """
    references = with_owner(objects.owner_references(obj), owner)
    if references is None:
        return False
    await rest.merge_patch(
        path,
        {
            "metadata": {
                "ownerReferences": references,
                "resourceVersion": objects.resource_version(obj),
            }
        },
    )
    log.info(
        "owner reference added",
        extra={"object": path, "owner": f"Deployment/{owner['name']}"},
    )
    return True


LEASES = Resource("coordination.k8s.io", "v1", "leases")


async def adopt_lease(rest: RestClient, namespace: str, lease: str, deployment: str) -> bool:
    """Give the Lease ``namespace/lease`` an owner reference to ``deployment``; True if patched.

    Called by the leader at the start of each term, when the Lease exists.
    """
    owner = await read_deployment_reference(rest, namespace, deployment)
    path = LEASES.object_path(lease, namespace=namespace)
    return await adopt(rest, path, await rest.get(path), owner)
