"""The real node's tool set and configuration (pure parts; the node itself runs in
e2e/test_real_node.py)."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from e2e.cluster import node_config, node_record, node_tools, tools
from e2e.cluster.netns import NODE_IP, POD_CIDR


def test_the_node_tool_set_has_its_own_key_and_leaves_the_main_set_alone() -> None:
    assert node_tools.version_key() != tools.version_key()
    assert tools.KUBERNETES in node_tools.version_key()
    main = tools.wrapper_go_mod()
    assert "go.etcd.io/etcd/server/v3" in main and "cmd/kubelet" not in main
    node = tools.wrapper_go_mod(node_tools.NODE_COMMANDS, module="kuota.local/node-tools")
    assert re.findall(r"k8s\.io/kubernetes/cmd/(\S+)", node) == ["kubelet", "kube-proxy"]
    assert "etcd" not in node


def test_containerd_keeps_every_path_in_the_node_directory(tmp_path: Path) -> None:
    text = node_config.containerd_config(tmp_path, tmp_path / "c.sock", tmp_path / "net.d")
    paths = re.findall(r'= "(/[^"]*)"', text)
    outside = [p for p in paths if not p.startswith(str(tmp_path)) and p != "/usr/lib/cni"]
    assert outside == []
    assert "restrict_oom_score_adj = true" in text  # no CAP_SYS_RESOURCE in the VM
    assert "netns_mounts_under_state_dir = true" in text
    assert f'sandbox_image = "{node_tools.PAUSE_REFERENCE}"' in text


def test_pod_addresses_come_from_the_node_directory(tmp_path: Path) -> None:
    plugin = node_config.cni_config("kuota-x", tmp_path / "ipam")["plugins"][0]
    assert plugin["ipam"]["dataDir"] == str(tmp_path / "ipam")
    assert plugin["ipam"]["ranges"] == [[{"subnet": POD_CIDR}]]


def test_kubelet_authenticates_clients_with_the_cluster_ca_only(tmp_path: Path) -> None:
    config = node_config.kubelet_config(
        tmp_path,
        tmp_path / "c.sock",
        "/kuota-x",
        tmp_path / "ca.crt",
        tmp_path / "s.crt",
        tmp_path / "s.key",
    )
    assert config["authentication"]["anonymous"] == {"enabled": False}
    assert config["authentication"]["x509"] == {"clientCAFile": str(tmp_path / "ca.crt")}
    assert config["authorization"] == {"mode": "Webhook"}
    assert config["readOnlyPort"] == 0 and config["address"] == NODE_IP
    assert config["resolvConf"] == ""  # no DNS: nothing for pods to resolve or leave by
    assert config["podLogsDir"].startswith(str(tmp_path))


def test_teardown_removes_empty_directories_it_created_but_never_a_file(tmp_path: Path) -> None:
    empty = tmp_path / "created" / "results"
    empty.mkdir(parents=True)
    node_record._remove_empty_tree(tmp_path / "created")
    assert not (tmp_path / "created").exists()
    kept = tmp_path / "shared" / "results"
    kept.mkdir(parents=True)
    (kept / "someone-elses").write_text("x")
    node_record._remove_empty_tree(tmp_path / "shared")
    assert (kept / "someone-elses").is_file()


def test_only_shim_sockets_nobody_listens_on_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(node_record, "SHIM_SOCKETS", tmp_path)
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(str(tmp_path / "live"))
    live.listen(1)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(tmp_path / "stale"))
    stale.close()  # the file stays, nobody listens: what a killed shim leaves
    try:
        node_record._remove_stale_shim_sockets()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["live"]
    finally:
        live.close()
