"""Start and stop the control-plane processes, and only ours.

Each component runs in its own session (process group), with a clean
environment, its output in ``logs/<name>.log``.  A process is recorded by pid
*and* kernel start time, so ``down`` after a crash or a reboot never signals a
stranger that happened to reuse the pid.  Nothing is ever killed by name.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ProcessRecord:
    """What identifies a started process across harness invocations."""

    name: str
    pid: int
    start_ticks: int
    log: str


def clean_env(home: Path) -> dict[str, str]:
    """PATH, HOME, TMPDIR and LANG only: no KUBECONFIG, proxies, KWOK_* or GO*."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    for name in ("TMPDIR", "LANG"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _start_ticks(pid: int) -> int | None:
    """Kernel start time of ``pid`` in clock ticks, or None when gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces; fields resume after ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def _die_with_parent() -> None:
    """Ask the kernel to SIGKILL the child when the harness dies.

    SIGKILL rather than SIGTERM: when the test runner is killed, every
    component gets the signal at once, and a kube-apiserver told to shut down
    gracefully while etcd vanishes hangs in its termination sequence for
    minutes.  A throw-away cluster needs no graceful end.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def spawn(
    name: str, argv: Sequence[str], *, workdir: Path, env: dict[str, str], die_with_parent: bool
) -> tuple[subprocess.Popen[bytes], ProcessRecord]:
    """Start one component in its own process group, logging to a file."""
    log_path = workdir / "logs" / f"{name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            list(argv),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=workdir,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent if die_with_parent else None,
        )
    ticks = _start_ticks(process.pid) or 0
    return process, ProcessRecord(name=name, pid=process.pid, start_ticks=ticks, log=str(log_path))


def is_alive(record: ProcessRecord) -> bool:
    """True only for the very process we started (same pid and start time)."""
    ticks = _start_ticks(record.pid)
    return ticks is not None and ticks == record.start_ticks


def stop(
    record: ProcessRecord,
    *,
    grace_seconds: float = 10.0,
    reap: Callable[[], int | None] | None = None,
) -> None:
    """SIGTERM the process group, wait, then SIGKILL; a no-op for strangers and the dead.

    ``reap`` is the owner's ``Popen.poll``. A zombie already counts as gone here, but its
    exit status can be collected only once all its threads have ended (a Go binary has
    many), so at the end ``reap`` is called until it returns the status (5 s at most): a
    Popen that never got it warns that the process "is still running" when collected.
    """
    try:
        _signal_until_gone(record, grace_seconds, reap)
    finally:
        deadline = time.monotonic() + 5.0
        while reap is not None and reap() is None and time.monotonic() < deadline:
            time.sleep(0.05)


def _signal_until_gone(
    record: ProcessRecord, grace_seconds: float, reap: Callable[[], int | None] | None
) -> None:
    for sig, wait in ((signal.SIGTERM, grace_seconds), (signal.SIGKILL, 5.0)):
        if not is_alive(record):
            return
        try:
            os.killpg(record.pid, sig)
        except ProcessLookupError:
            return
        except PermissionError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if reap:
                reap()
            if not is_alive(record):
                return
            time.sleep(0.1)


def current_process() -> ProcessRecord:
    """The record of this very process (the owner of a cluster it starts)."""
    pid = os.getpid()
    return ProcessRecord(name="owner", pid=pid, start_ticks=_start_ticks(pid) or 0, log="")


def log_tail(path: str | Path, lines: int = 80) -> str:
    try:
        content = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(content[-lines:])
