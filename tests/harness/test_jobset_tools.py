"""The JobSet build's cache and what the harness hands the API server and the manager."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from e2e.cluster import jobset, jobset_tools, tools


def test_the_jobset_set_has_its_own_key_beside_the_control_plane(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUOTA_TOOLS_DIR", str(tmp_path))
    assert jobset_tools.version_dir() == tmp_path / jobset_tools.version_key()
    assert jobset_tools.version_dir() != tools.version_dir()
    assert jobset_tools.JOBSET in jobset_tools.version_key()
    assert tools.STAGING in jobset_tools.version_key()


def test_wrapper_module_pins_jobset_and_lifts_its_libraries_to_the_clusters_patch() -> None:
    go_mod = jobset_tools.wrapper_go_mod()
    assert f"\tsigs.k8s.io/jobset {jobset_tools.JOBSET}\n" in go_mod
    assert "tool sigs.k8s.io/jobset\n" in go_mod
    for library in ("api", "apimachinery", "client-go"):
        assert f"\tk8s.io/{library} {tools.STAGING}\n" in go_mod
    assert "replace" not in go_mod, "JobSet needs no replace directives"


def _complete_looking_set(root: Path, binary: bytes) -> None:
    root.mkdir(exist_ok=True)
    (root / "VERSIONS").write_text(jobset_tools.stamp_text())
    for relative in jobset_tools.MODULE_FILES:
        (root / "module" / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / "module" / relative).write_text("kind: X\n")
    manager = jobset_tools.JobSetTools(root).manager
    manager.parent.mkdir(parents=True)
    manager.write_bytes(binary)
    os.chmod(manager, 0o755)


def test_a_hit_needs_a_binary_built_from_the_pinned_modules(tmp_path: Path) -> None:
    assert not jobset_tools.is_complete(tmp_path)
    _complete_looking_set(tmp_path / "other", b"\0dep\tsigs.k8s.io/jobset\tv0.0.1\th1:x\n")
    assert not jobset_tools.is_complete(tmp_path / "other")
    markers = b"\0".join(jobset_tools.build_info_markers())
    _complete_looking_set(tmp_path / "pinned", b"\0dep\t" + markers + b"h1:x\n")
    assert jobset_tools.is_complete(tmp_path / "pinned")


def test_a_missing_manifest_is_not_a_hit(tmp_path: Path) -> None:
    _complete_looking_set(tmp_path, b"\0".join(jobset_tools.build_info_markers()))
    jobset_tools.JobSetTools(tmp_path).crd.unlink()
    assert not jobset_tools.is_complete(tmp_path)


def test_resolve_without_a_build_says_what_to_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUOTA_TOOLS_DIR", str(tmp_path))
    with pytest.raises(tools.ToolsMissing, match="python -m e2e.cluster build"):
        jobset_tools.JobSetTools.resolve(build_if_missing=False)


def test_the_manager_runs_alone_on_loopback_without_its_own_certificates() -> None:
    config = jobset.manager_configuration(
        webhook_port=9443, health_port=8081, cert_dir=Path("/certs")
    )
    assert config["webhook"] == {"host": "127.0.0.1", "port": 9443, "certDir": "/certs"}
    assert config["health"]["healthProbeBindAddress"] == "127.0.0.1:8081"
    assert config["leaderElection"]["leaderElect"] is False
    assert config["internalCertManagement"]["enable"] is False
    assert config["metrics"]["bindAddress"] == "0"


def test_webhook_registrations_are_patched_as_kustomize_would_and_reached_by_url() -> None:
    manifests: list[dict[str, Any]] = [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "mutating"},
            "webhooks": [
                {"name": "a", "clientConfig": {"service": {"name": "s", "path": "/mutate-a"}}},
                {"name": "pods", "clientConfig": {"service": {"name": "s", "path": "/mutate-p"}}},
            ],
        }
    ]
    scoped = {"matchExpressions": [{"key": "owned", "operator": "Exists"}]}
    kustomization = {
        "patches": [
            {
                "path": "p.yaml",
                "target": {"kind": "MutatingWebhookConfiguration", "name": "mutating"},
            },
            {"path": "q.yaml", "target": {"kind": "ValidatingWebhookConfiguration", "name": "x"}},
        ]
    }
    patches: dict[str, list[dict[str, Any]]] = {
        "p.yaml": [{"op": "add", "path": "/webhooks/1/objectSelector", "value": scoped}],
        "q.yaml": [{"op": "remove", "path": "/webhooks/0"}],
    }
    (rendered,) = jobset.webhook_configurations(
        manifests, kustomization, patches, base_url="https://127.0.0.1:1234", ca_bundle="Q0E="
    )
    assert rendered["metadata"]["name"] == "jobset-mutating"
    assert [hook["clientConfig"] for hook in rendered["webhooks"]] == [
        {"url": "https://127.0.0.1:1234/mutate-a", "caBundle": "Q0E="},
        {"url": "https://127.0.0.1:1234/mutate-p", "caBundle": "Q0E="},
    ]
    assert rendered["webhooks"][1]["objectSelector"] == scoped
    assert "objectSelector" not in rendered["webhooks"][0]
    assert "objectSelector" not in manifests[0]["webhooks"][1], "the input is left as it was"
