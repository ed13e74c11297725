"""The control plane's fault helpers (restart, freeze, thaw) on a stand-in component: a
small HTTP server started the way every component is (free port, readiness probe)."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from e2e.cluster.controlplane import ControlPlane
from e2e.cluster.processes import is_alive


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _state(pid: int, *, settle: str | None = None) -> str:
    """The process state letter (T: stopped); waits up to 2 s for ``settle`` (signals are
    delivered asynchronously)."""
    deadline = time.monotonic() + 2
    while True:
        stat = Path(f"/proc/{pid}/stat").read_text()
        state = stat[stat.rindex(")") + 2 :].split()[0]
        if settle is None or state == settle or time.monotonic() > deadline:
            return state
        time.sleep(0.02)


@pytest.fixture
def plane(tmp_path: Path) -> Any:
    control = ControlPlane("faults", tools=object(), workdir=tmp_path, nodes=())
    yield control
    control.stop()


def _start_server(plane: ControlPlane) -> int:
    def argv(ports: list[int]) -> list[str]:
        return [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(ports[0])]

    return plane._start_with_ports("kube-apiserver", 1, argv, lambda p: _answers(p[0]), 20)[0]


def test_restart_kills_the_component_and_brings_it_back_on_the_same_port(
    plane: ControlPlane,
) -> None:
    port = _start_server(plane)
    before = plane._entry("kube-apiserver")
    seconds = plane.restart("kube-apiserver", down_for=0.5, timeout=20)
    after = plane._entry("kube-apiserver")
    assert before[1].pid != after[1].pid and not is_alive(before[1])
    assert before[0].returncode == -9, "a crash (SIGKILL), not a graceful stop"
    assert _answers(port) and 0.5 < seconds < 20
    assert "kube-apiserver" in (plane.workdir / "state.json").read_text()


def test_frozen_stops_the_component_for_the_block_and_thaws_it_even_on_error(
    plane: ControlPlane,
) -> None:
    _start_server(plane)
    pid = plane._entry("kube-apiserver")[1].pid
    with pytest.raises(RuntimeError), plane.frozen("kube-apiserver"):
        assert _state(pid, settle="T") == "T"
        raise RuntimeError("the scenario failed while etcd was frozen")
    assert _state(pid, settle="S") != "T"


def test_an_unknown_component_cannot_be_signalled(plane: ControlPlane) -> None:
    with pytest.raises(RuntimeError, match="not running"):
        plane.freeze("etcd")
