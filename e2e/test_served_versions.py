"""Which versions of kuota's CRDs a cluster serves, and how legacy manifests get in
(docs/api-differences.md#api-versions-served).

By default kuota's CRDs serve what Kueue v0.19 serves, ``v1beta2`` and
``v1beta1``.  What a user with ``v1alpha1``/``v1alpha2`` manifests sees:

* ``kubectl apply`` of such a manifest fails with the API server's ``no
  matches for kind``, and ``kuota validate`` of the same file says the two
  ways forward;
* the output of ``kuota convert`` of every valid alpha seed example applies
  as it is, and the cluster stores what the converted manifest says;
* the chart's ``crds.servedLegacyVersions: [v1alpha1, v1alpha2, v1beta1]``
  serves the alpha versions again, converted both ways by kuota's webhook.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.cluster.tools import ToolPaths
from e2e.kuota_install import KuotaWebhook, serve_legacy_versions, wait_until_served
from scheduler.api.crds import LEGACY_VERSIONS, SERVED_LEGACY_VERSIONS, load_crds
from scheduler.api.pipeline import review
from tests.api.seed_examples import documents
from tests.chart.helm import CHART, NAMESPACE, run_helm

from .fixtures import ClusterHandle
from .test_chart import _external_values
from .test_crds_on_cluster import same_value

pytestmark = pytest.mark.cluster

GROUP = "kueue.x-k8s.io"
REPO_ROOT = Path(__file__).resolve().parents[1]
PLURALS = {crd["spec"]["names"]["kind"]: crd["spec"]["names"]["plural"] for crd in load_crds()}
NAMESPACED = {
    crd["spec"]["names"]["kind"] for crd in load_crds() if crd["spec"]["scope"] == "Namespaced"
}
ALPHA_SEEDS = [
    doc
    for doc in documents()
    if doc.api_version in (f"{GROUP}/v1alpha1", f"{GROUP}/v1alpha2")
    and review(doc.raw, default_namespace="default").valid
]


def kubectl(
    cluster: ClusterHandle, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    return subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def run_kuota(*args: str) -> subprocess.CompletedProcess[str]:
    """The ``kuota`` command, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "scheduler.cli.main", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def named(seed_raw: dict[str, Any], namespace: str) -> dict[str, Any]:
    """The seed under a name of this test (cluster-scoped names outlive the namespace)."""
    body = copy.deepcopy(seed_raw)
    body["metadata"]["name"] = f"{body['metadata']['name']}-{namespace}"[:63].rstrip("-")
    if body["kind"] in NAMESPACED:
        body["metadata"]["namespace"] = namespace
    return body


def get(cluster: ClusterHandle, body: dict[str, Any], version: str) -> dict[str, Any]:
    scope = ["-n", body["metadata"]["namespace"]] if body["kind"] in NAMESPACED else []
    resource = f"{PLURALS[body['kind']]}.{version}.{GROUP}"
    got = kubectl(cluster, *scope, "get", resource, body["metadata"]["name"], "-o", "json")
    assert got.returncode == 0, got.stderr
    document: dict[str, Any] = json.loads(got.stdout)
    return document


def spec_of(obj: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in obj.items() if key not in ("metadata", "status")}


def test_by_default_the_crds_serve_v1beta2_and_v1beta1(
    cluster: ClusterHandle, kuota: KuotaWebhook
) -> None:
    listed = json.loads(kubectl(cluster, "get", "crd", "-o", "json").stdout)
    served = {
        item["metadata"]["name"]: [v["name"] for v in item["spec"]["versions"] if v["served"]]
        for item in listed["items"]
        if item["spec"]["group"] == GROUP
    }
    assert len(served) == 10
    assert set(map(tuple, served.values())) == {("v1beta1", "v1beta2")}, served
    assert kubectl(cluster, "get", "--raw", f"/apis/{GROUP}/v1alpha1").returncode != 0


def test_a_legacy_manifest_is_refused_and_kuota_validate_says_how_to_apply_it(
    cluster: ClusterHandle, kuota: KuotaWebhook, namespace: str, tmp_path: Path
) -> None:
    seed = next(s for s in ALPHA_SEEDS if s.kind == "ClusterQueue")
    manifest = tmp_path / "legacy.yaml"
    manifest.write_text(yaml.safe_dump(named(seed.raw, namespace)))
    # A fresh discovery cache: what a user's kubectl learns from this cluster.
    applied = kubectl(cluster, "--cache-dir", str(tmp_path / "cache"), "apply", "-f", str(manifest))
    assert applied.returncode != 0
    assert f'no matches for kind "ClusterQueue" in version "{seed.api_version}"' in (
        applied.stderr
    ), applied.stderr

    checked = run_kuota("validate", str(manifest))
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stderr
    assert f"apply the output of `kuota convert {manifest}`" in checked.stderr
    assert "crds.servedLegacyVersions" in checked.stderr


@pytest.mark.parametrize(
    "seed", ALPHA_SEEDS, ids=lambda s: f"{s.api_version.split('/')[1]}:{s.kind}:{s.line}"
)
def test_a_converted_legacy_seed_applies_with_the_default_versions(
    seed: Any, cluster: ClusterHandle, kuota: KuotaWebhook, namespace: str, tmp_path: Path
) -> None:
    legacy = tmp_path / "legacy.yaml"
    legacy.write_text(yaml.safe_dump(named(seed.raw, namespace)))
    converted_file = tmp_path / "converted.yaml"
    converted = run_kuota("convert", str(legacy))
    assert converted.returncode == 0, converted.stderr
    converted_file.write_text(converted.stdout)
    (body,) = list(yaml.safe_load_all(converted.stdout))
    assert body["apiVersion"] == f"{GROUP}/v1beta2"

    checked = run_kuota("validate", str(converted_file))
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stderr
    assert "kuota convert" not in checked.stderr

    applied = kubectl(cluster, "apply", "-f", str(converted_file))
    assert applied.returncode == 0, applied.stderr
    try:
        stored = get(cluster, body, "v1beta2")
        assert same_value(spec_of(body), stored), (
            f"the cluster lost what the converted manifest says: {json.dumps(stored)[:2000]}"
        )
    finally:
        kubectl(cluster, "delete", "-f", str(converted_file), "--wait=false")


def test_the_chart_value_serves_and_converts_the_alpha_versions(
    cluster: ClusterHandle, kuota: KuotaWebhook, namespace: str
) -> None:
    """The chart's CRDs rendered with ``crds.servedLegacyVersions: [v1alpha1, v1alpha2,
    v1beta1]`` (registered at the session's webhook) and applied; the default comes back after.
    """
    rendered = run_helm(
        "template",
        "kuota",
        str(CHART),
        "-n",
        NAMESPACE,
        *_external_values(kuota),
        "--set-json",
        f"crds.servedLegacyVersions={json.dumps(list(LEGACY_VERSIONS))}",
    ).stdout
    crds = [
        {**item, "metadata": {"name": item["metadata"]["name"]}}
        for item in yaml.safe_load_all(rendered)
        if item and item["kind"] == "CustomResourceDefinition"
    ]
    assert len(crds) == 10
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    try:
        applied = kubectl(
            cluster,
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=kuota-e2e",
            "-f",
            "-",
            stdin=yaml.safe_dump_all(crds),
        )
        assert applied.returncode == 0, applied.stderr
        wait_until_served(binary, cluster.kubeconfig, crds)
        for kind, version in (("ClusterQueue", "v1alpha1"), ("ResourceFlavor", "v1alpha2")):
            seed = next(
                s for s in ALPHA_SEEDS if (s.kind, s.api_version) == (kind, f"{GROUP}/{version}")
            )
            body = named(seed.raw, namespace)
            done = kubectl(cluster, "apply", "-f", "-", stdin=json.dumps(body))
            assert done.returncode == 0, done.stderr
            try:
                hub = get(cluster, body, "v1beta2")
                assert review(hub, operation="UPDATE", old=hub).valid
                read_back = get(cluster, body, version)
                assert read_back["apiVersion"] == seed.api_version
                assert same_value(spec_of({**body, "apiVersion": seed.api_version}), read_back)
            finally:
                kubectl(cluster, "delete", "-f", "-", "--wait=false", stdin=json.dumps(body))
    finally:
        serve_legacy_versions(binary, cluster.kubeconfig, kuota, SERVED_LEGACY_VERSIONS)
