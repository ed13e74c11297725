"""CPU seconds and peak RSS of running processes, read from /proc.

A process is measured with its descendants (a component that forks workers
is counted whole).  CPU is utime + stime of the live processes plus what
their reaped children had (``cutime`` + ``cstime``); peak RSS is ``VmHWM``
summed over the tree.  :class:`Sampler` polls in a thread and keeps the last
(largest) figures of each tree, so a process that exits mid-run keeps the
figures it had.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from benchmarks.kueue_perf.report import ProcessUsage

TICKS = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo += _children(current)
    return pids


def _one(pid: int) -> ProcessUsage | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): utime, stime, cutime, cstime are fields 14-17.
    ticks = sum(int(value) for value in fields[11:15])
    peak = 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) * 1024
    return ProcessUsage(cpu_seconds=ticks / TICKS, peak_rss_bytes=peak)


def measure(pid: int) -> ProcessUsage | None:
    """The process ``pid`` and its descendants now (None: it is gone)."""
    usages = [usage for usage in (_one(member) for member in tree(pid)) if usage is not None]
    if not usages:
        return None
    return ProcessUsage(
        cpu_seconds=sum(usage.cpu_seconds for usage in usages),
        peak_rss_bytes=sum(usage.peak_rss_bytes for usage in usages),
    )


class Sampler:
    """Polls named process trees every ``interval`` seconds until stopped."""

    def __init__(self, pids: dict[str, int], interval: float = 2.0) -> None:
        self.pids = dict(pids)
        self.interval = interval
        self.latest: dict[str, ProcessUsage] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="procstat", daemon=True)

    def add(self, name: str, pid: int) -> None:
        with self._lock:
            self.pids[name] = pid

    def start(self) -> None:
        self._thread.start()

    def sample(self) -> dict[str, ProcessUsage]:
        with self._lock:
            for name, pid in self.pids.items():
                usage = measure(pid)
                if usage is None:
                    continue
                before = self.latest.get(name)
                if before is not None:
                    usage = ProcessUsage(
                        cpu_seconds=max(usage.cpu_seconds, before.cpu_seconds),
                        peak_rss_bytes=max(usage.peak_rss_bytes, before.peak_rss_bytes),
                    )
                self.latest[name] = usage
            return dict(self.latest)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def stop(self) -> dict[str, ProcessUsage]:
        """Stop polling; return the figures of one last sample."""
        self._stop.set()
        self._thread.join()
        return self.sample()
