"""Re-applying an object in an older API version after a newer one.

``kubectl apply`` of an older-version manifest reads the stored ``v1beta2``
object converted *down* to that version, computes a patch against its last
applied configuration (written in the *other* version, so it deletes nothing
the older form shows), and the API server converts the patched object back
*up*.  What the down-conversion had to write to carry ``v1beta2`` data
survives that patch untouched; it must not win over what the new manifest
sets.  Each test applies the way a user does, with ``kubectl apply`` on the
real cluster, and reads the object back in ``v1beta2``, the version the
scheduler acts on:

* a ``nodeSelector`` next to new v1alpha2 ``metadata.labels``;
* a stashed preemption next to a late-v1alpha2 ``spec.preemption``;
* the v1beta1 list form of admission checks next to a new strategy.

The v1alpha2 tests serve v1alpha2 first (``legacy_versions_served``: the
chart's ``crds.servedLegacyVersions`` with the alpha versions); v1beta1 is
served by default.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import KuotaWebhook

from .fixtures import ClusterHandle

pytestmark = pytest.mark.cluster

GROUP = "kueue.x-k8s.io"


def kubectl(cluster: ClusterHandle, *args: str, stdin: str | None = None) -> str:
    """Run kubectl; fail the test with its stderr when it fails; return stdout."""
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    done = subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def apply(cluster: ClusterHandle, manifest: dict[str, Any]) -> str:
    return kubectl(cluster, "apply", "-f", "-", stdin=json.dumps(manifest))


def read(cluster: ClusterHandle, plural: str, name: str, version: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        kubectl(cluster, "get", f"{plural}.{version}.{GROUP}", name, "-o", "json")
    )
    return document


@pytest.fixture
def name(cluster: ClusterHandle, kuota: KuotaWebhook) -> Iterator[str]:
    """A fresh cluster-scoped name; the flavor or queue of that name is deleted afterwards.

    kuota's finalizer is removed first: it waits for kuota's scheduler, which
    these tests do not start.
    """
    chosen = f"reapply-{uuid.uuid4().hex[:8]}"
    yield chosen
    for plural in ("resourceflavors", "clusterqueues"):
        resource = f"{plural}.v1beta2.{GROUP}"
        if kubectl(cluster, "get", resource, chosen, "--ignore-not-found", "-o", "name"):
            kubectl(
                cluster,
                "patch",
                resource,
                chosen,
                "--type=merge",
                "-p",
                '{"metadata":{"finalizers":null}}',
            )
            kubectl(cluster, "delete", resource, chosen, "--wait=false")


@pytest.mark.usefixtures("legacy_versions_served")
def test_v1alpha2_flavor_reapplied_after_v1beta2_takes_the_new_node_labels(
    cluster: ClusterHandle, name: str
) -> None:
    apply(
        cluster,
        {
            "apiVersion": f"{GROUP}/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": name},
            "spec": {"nodeLabels": {"instance-type": "ondemand", "zone": "a"}},
        },
    )
    # The v1alpha2 form of the introductory blog post: metadata.labels are the node labels.
    reapplied = {
        "apiVersion": f"{GROUP}/v1alpha2",
        "kind": "ResourceFlavor",
        "metadata": {"name": name, "labels": {"instance-type": "spot"}},
    }
    assert "configured" in apply(cluster, reapplied)

    stored = read(cluster, "resourceflavors", name, "v1beta2")
    assert stored["spec"].get("nodeLabels") == {"instance-type": "spot"}, stored
    legacy = read(cluster, "resourceflavors", name, "v1alpha2")
    assert legacy["metadata"]["labels"] == {"instance-type": "spot"}
    assert legacy.get("nodeSelector", {"instance-type": "spot"}) == {"instance-type": "spot"}, (
        legacy
    )

    # Applying the same v1alpha2 manifest again changes nothing.
    assert "unchanged" in apply(cluster, reapplied)
    again = read(cluster, "resourceflavors", name, "v1beta2")
    assert again["spec"].get("nodeLabels") == {"instance-type": "spot"}, again


def _cluster_queue_groups() -> list[dict[str, Any]]:
    return [
        {
            "coveredResources": ["cpu"],
            "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}],
        }
    ]


@pytest.mark.usefixtures("legacy_versions_served")
def test_v1alpha2_cluster_queue_reapplied_after_v1beta2_takes_the_new_preemption(
    cluster: ClusterHandle, name: str
) -> None:
    apply(
        cluster,
        {
            "apiVersion": f"{GROUP}/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "cohortName": "team",
                "preemption": {
                    "withinClusterQueue": "LowerPriority",
                    "reclaimWithinCohort": "Any",
                    "borrowWithinCohort": {"policy": "LowerPriority"},
                },
                "resourceGroups": _cluster_queue_groups(),
            },
        },
    )
    # Late v1alpha2 preemption: only reclaimWithinCohort is set, withinClusterQueue is Never.
    apply(
        cluster,
        {
            "apiVersion": f"{GROUP}/v1alpha2",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "cohort": "team",
                "preemption": {"reclaimWithinCohort": "LowerPriority"},
                "resources": [
                    {"name": "cpu", "flavors": [{"name": "default", "quota": {"min": 4}}]}
                ],
            },
        },
    )

    preemption = read(cluster, "clusterqueues", name, "v1beta2")["spec"]["preemption"]
    assert preemption.get("withinClusterQueue", "Never") == "Never", preemption
    assert preemption["reclaimWithinCohort"] == "LowerPriority", preemption
    # What v1alpha2 cannot express is kept from the v1beta2 apply.
    assert preemption.get("borrowWithinCohort") == {"policy": "LowerPriority"}, preemption


def test_v1beta1_cluster_queue_reapplied_after_v1beta2_takes_the_new_admission_checks(
    cluster: ClusterHandle, name: str
) -> None:
    def v1beta1(admission: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": f"{GROUP}/v1beta1",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": _cluster_queue_groups(),
                **admission,
            },
        }

    apply(cluster, v1beta1({"admissionChecks": ["first"]}))
    apply(
        cluster,
        {
            "apiVersion": f"{GROUP}/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": _cluster_queue_groups(),
                "admissionChecksStrategy": {"admissionChecks": [{"name": "second"}]},
            },
        },
    )
    apply(cluster, v1beta1({"admissionChecksStrategy": {"admissionChecks": [{"name": "third"}]}}))

    stored = read(cluster, "clusterqueues", name, "v1beta2")
    assert stored["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "third"}]}, (
        stored["spec"]
    )
    legacy = read(cluster, "clusterqueues", name, "v1beta1")
    assert "admissionChecks" not in legacy["spec"], legacy["spec"]
