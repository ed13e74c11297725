"""Processes: we stop what we started, and never a stranger with a reused pid."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from pathlib import Path

from e2e.cluster.processes import clean_env, is_alive, spawn, stop


def test_spawned_process_is_recorded_and_stopped(tmp_path: Path) -> None:
    process, record = spawn(
        "sleeper", ["sleep", "60"], workdir=tmp_path, env=clean_env(tmp_path), die_with_parent=True
    )
    assert is_alive(record)
    stop(record, grace_seconds=5, reap=process.poll)
    assert process.wait(timeout=5) is not None
    assert not is_alive(record)
    assert (tmp_path / "logs" / "sleeper.log").exists()


def test_a_record_with_another_start_time_is_never_signalled(tmp_path: Path) -> None:
    process, record = spawn(
        "sleeper", ["sleep", "60"], workdir=tmp_path, env=clean_env(tmp_path), die_with_parent=True
    )
    try:
        stranger = dataclasses.replace(record, start_ticks=record.start_ticks + 1)
        assert not is_alive(stranger)
        stop(stranger, grace_seconds=1)
        assert process.poll() is None, "a process that is not the recorded one must survive"
    finally:
        stop(record, reap=process.poll)


def test_clean_env_drops_cluster_and_proxy_variables(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KUBECONFIG", "/x")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy")
    monkeypatch.setenv("KWOK_KUBE_VERSION", "1")
    env = clean_env(tmp_path)
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG"}
    assert env["HOME"] == str(tmp_path)


def test_stopping_an_already_exited_process_is_a_no_op(tmp_path: Path) -> None:
    process, record = spawn(
        "quick", ["true"], workdir=tmp_path, env=clean_env(tmp_path), die_with_parent=True
    )
    process.wait(timeout=5)
    stop(record, reap=process.poll)
    assert process.returncode == 0
    assert isinstance(process, subprocess.Popen)


def test_stop_collects_the_exit_status_of_a_process_that_already_exited(tmp_path: Path) -> None:
    # An exited child is a zombie, which counts as gone: stop must still reap it, or its
    # Popen warns "subprocess ... is still running" when garbage-collected.
    process, record = spawn(
        "quick", ["true"], workdir=tmp_path, env=clean_env(tmp_path), die_with_parent=True
    )
    deadline = time.monotonic() + 5
    while is_alive(record) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not is_alive(record) and process.returncode is None
    stop(record, reap=process.poll)
    assert process.returncode == 0


# The main thread ends while another thread still runs: the leader is a zombie, so gone for
# is_alive, yet the process cannot be reaped until its last thread ends - what a Go binary
# such as kube-apiserver looks like for a moment after SIGKILL.
LEADER_ENDS_FIRST = """
import ctypes, os, threading, time

def last_thread():
    time.sleep(1)
    os._exit(3)

threading.Thread(target=last_thread).start()
ctypes.CDLL(None).pthread_exit(None)
"""


def test_stop_waits_until_a_dead_multithreaded_process_can_be_reaped(tmp_path: Path) -> None:
    process, record = spawn(
        "threads",
        [sys.executable, "-c", LEADER_ENDS_FIRST],
        workdir=tmp_path,
        env=clean_env(tmp_path),
        die_with_parent=True,
    )
    deadline = time.monotonic() + 5
    while is_alive(record) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not is_alive(record) and process.poll() is None
    stop(record, reap=process.poll)
    assert process.returncode == 3


def test_sweep_removes_clusters_whose_owner_died_and_keeps_live_ones(tmp_path: Path) -> None:
    import json

    from e2e.cluster.controlplane import sweep_abandoned
    from e2e.cluster.processes import current_process

    def cluster_dir(name: str, owner: dict) -> tuple[Path, subprocess.Popen[bytes], object]:
        workdir = tmp_path / name
        workdir.mkdir()
        process, record = spawn(
            "etcd", ["sleep", "60"], workdir=workdir, env=clean_env(workdir), die_with_parent=True
        )
        state = {"owner": owner, "processes": [dataclasses.asdict(record)]}
        (workdir / "state.json").write_text(json.dumps(state))
        return workdir, process, record

    dead_owner = dataclasses.asdict(dataclasses.replace(current_process(), start_ticks=1))
    abandoned, orphan, orphan_record = cluster_dir("kuota-e2e-old", dead_owner)
    live, survivor, survivor_record = cluster_dir(
        "kuota-e2e-live", dataclasses.asdict(current_process())
    )
    try:
        assert sweep_abandoned(tmp_path, "kuota-e2e-") == [abandoned]
        assert not abandoned.exists()
        assert orphan.wait(timeout=15) is not None, "the abandoned cluster's process was stopped"
        assert live.exists() and survivor.poll() is None
    finally:
        stop(survivor_record, reap=survivor.poll)  # type: ignore[arg-type]
        stop(orphan_record, reap=orphan.poll)  # type: ignore[arg-type]
