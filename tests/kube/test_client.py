"""The API client kuota makes: proxy settings from the environment, read once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.kube.client import new_api_client, proxy_from_environment

API_SERVER = "https://127.0.0.1:6443"


@pytest.fixture(autouse=True)
def no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("https_proxy", "http_proxy", "no_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def kubeconfig(tmp_path: Path, **cluster: Any) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": API_SERVER, **cluster}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def test_the_environment_names_the_proxy_unless_no_proxy_covers_the_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert proxy_from_environment(API_SERVER) is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert proxy_from_environment(API_SERVER) == "http://proxy.example:3128"
    assert proxy_from_environment("http://127.0.0.1:8080") is None, "only https_proxy for https"
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    assert proxy_from_environment(API_SERVER) is None


async def test_a_client_reads_the_environment_once_not_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    api = await new_api_client(kubeconfig(tmp_path))
    try:
        assert api.rest_client.proxy == "http://proxy.example:3128"
        assert api.rest_client.pool_manager.trust_env is False
    finally:
        await api.close()


async def test_a_kubeconfigs_proxy_url_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    api = await new_api_client(kubeconfig(tmp_path, **{"proxy-url": "http://other:8080"}))
    try:
        assert api.rest_client.proxy == "http://other:8080"
    finally:
        await api.close()


async def test_without_a_proxy_the_client_connects_directly(tmp_path: Path) -> None:
    api = await new_api_client(kubeconfig(tmp_path))
    try:
        assert not api.rest_client.proxy
        assert not api.rest_client.pool_manager.closed
    finally:
        await api.close()
    assert api.rest_client.pool_manager.closed
