"""The tool cache: keys, the wrapper module, and what counts as a hit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from e2e.cluster import tools


def test_cache_root_honours_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KUOTA_TOOLS_DIR", str(tmp_path))
    assert tools.version_dir() == tmp_path / tools.version_key()


def test_cache_root_defaults_to_user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUOTA_TOOLS_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tools.cache_root() == tmp_path / "kuota-cluster-tools"


def test_version_key_names_every_pin() -> None:
    key = tools.version_key()
    for pin in (tools.KUBERNETES, tools.ETCD, tools.KWOK, tools.HELM):
        assert pin in key


def test_wrapper_module_maps_every_staging_module_to_the_matching_tag() -> None:
    go_mod = tools.wrapper_go_mod()
    replaced = re.findall(r"k8s\.io/(\S+) => k8s\.io/\1 (v\S+)", go_mod)
    assert len(replaced) == 31
    assert {version for _, version in replaced} == {tools.STAGING}
    assert tools.STAGING.split(".")[1] == tools.KUBERNETES.split(".")[1], (
        "staging must match Kubernetes"
    )
    assert f"k8s.io/kubernetes {tools.KUBERNETES}" in go_mod


def test_an_empty_or_unstamped_directory_is_not_a_cache_hit(tmp_path: Path) -> None:
    assert not tools.is_complete(tmp_path)
    (tmp_path / "VERSIONS").write_text("something else\n")
    assert not tools.is_complete(tmp_path)


def test_a_stamp_without_binaries_is_not_a_cache_hit(tmp_path: Path) -> None:
    (tmp_path / "VERSIONS").write_text(tools.stamp_text())
    assert not tools.is_complete(tmp_path)


def test_resolve_without_tools_and_without_building_says_what_to_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUOTA_TOOLS_DIR", str(tmp_path))
    with pytest.raises(tools.ToolsMissing, match="python -m e2e.cluster build"):
        tools.ToolPaths.resolve(build_if_missing=False)
