"""A CPU cap for the benchmark's cluster: one cgroup with a CPU quota (``BENCH_CPUS``).

``make bench-kueue BENCH_CPUS=1.5`` runs each side with the processes that serve
it (etcd, the API server, the controller manager, and kuota's scheduler and
webhook, or ``minimalkueue``) in one cgroup whose quota is 1.5 CPUs, so the
ratio between the two sides is measured where CPU is scarce, as on a busy
machine, not only where it is free.  The runner, the load generator, stays
outside the cap: it plays the users.

cgroup v2 (``/sys/fs/cgroup`` with ``cgroup.controllers``): a child of the
root with ``cpu.max`` set to ``<quota> <period>``; the ``cpu`` controller is
enabled in the root's ``cgroup.subtree_control`` first (the root is the one
cgroup exempt from the no-internal-processes rule).  A host with the v1 ``cpu``
hierarchy (``/sys/fs/cgroup/cpu``) gets the same quota through
``cpu.cfs_quota_us`` and ``cpu.cfs_period_us``.  Processes move in by pid,
with their descendants (children started later inherit the cgroup); on close
they move back to the root and the cgroup is removed.  Needs root.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

PERIOD_US = 100_000
"""The quota's period: the kernel's default (100 ms)."""
MIN_CPUS = 0.01
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC = Path("/proc")
Layout = Literal["v2", "v1"]


class CapError(RuntimeError):
    """The cap cannot be set up (not root, no cpu controller, a bad value)."""


def parse_cpus(text: str | None) -> float | None:
    """``BENCH_CPUS`` as a number of CPUs; empty or absent means no cap: pure."""
    if text is None or text.strip() == "":
        return None
    try:
        cpus = float(text)
    except ValueError:
        raise CapError(f"BENCH_CPUS={text!r}: not a number of CPUs (e.g. 1.5)") from None
    if not math.isfinite(cpus) or cpus < MIN_CPUS:
        raise CapError(f"BENCH_CPUS={text!r}: must be at least {MIN_CPUS}")
    return cpus


def quota_us(cpus: float, period_us: int = PERIOD_US) -> int:
    """Microseconds of CPU per period for ``cpus`` CPUs: pure."""
    return max(1000, round(cpus * period_us))


def cpu_max(cpus: float, period_us: int = PERIOD_US) -> str:
    """The cgroup v2 ``cpu.max`` line for ``cpus`` CPUs: pure."""
    return f"{quota_us(cpus, period_us)} {period_us}"


def layout_of(root: Path) -> tuple[Layout, Path]:
    """Which cgroup hierarchy holds the cpu controller, and its root directory."""
    controllers = root / "cgroup.controllers"
    if controllers.is_file():
        if "cpu" not in controllers.read_text().split():
            raise CapError(f"{controllers} does not offer the cpu controller")
        return "v2", root
    if (root / "cpu" / "cpu.cfs_quota_us").is_file():
        return "v1", root / "cpu"
    raise CapError(f"no cgroup cpu controller under {root} (cgroup v2 or the v1 cpu hierarchy)")


def descendants(pids: Iterable[int], proc: Path = PROC) -> set[int]:
    """``pids`` and every process below them, from each process's parent in /proc."""
    parent_of: dict[int, int] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # The command name (field 2) may hold spaces and parentheses: split after it.
        fields = stat[stat.rindex(")") + 2 :].split()
        parent_of[int(entry.name)] = int(fields[1])
    found = set(pids)
    grew = True
    while grew:
        more = {pid for pid, parent in parent_of.items() if parent in found} - found
        grew = bool(more)
        found |= more
    return found


@dataclass
class CpuCap:
    """One cgroup capped at ``cpus`` CPUs; :meth:`add` moves processes in."""

    cpus: float
    root: Path = CGROUP_ROOT
    name: str = field(default_factory=lambda: f"kuota-bench-{os.getpid()}")
    proc: Path = PROC
    layout: Layout = field(init=False)
    hierarchy: Path = field(init=False)
    path: Path = field(init=False)
    members: set[int] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.layout, self.hierarchy = layout_of(self.root)
        self.path = self.hierarchy / self.name

    def open(self) -> CpuCap:
        """Create the cgroup and set its quota."""
        if self.layout == "v2":
            enabled = self.hierarchy / "cgroup.subtree_control"
            if "cpu" not in enabled.read_text().split():
                enabled.write_text("+cpu")
        self.path.mkdir(exist_ok=True)
        if self.layout == "v2":
            (self.path / "cpu.max").write_text(cpu_max(self.cpus))
        else:
            (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.path / "cpu.cfs_quota_us").write_text(str(quota_us(self.cpus)))
        return self

    def add(self, pids: Iterable[int]) -> set[int]:
        """Move ``pids`` and their descendants into the cgroup; returns the pids moved."""
        moved = set()
        for pid in sorted(descendants(pids, self.proc)):
            try:
                (self.path / "cgroup.procs").write_text(str(pid))
            except ProcessLookupError:
                continue  # exited meanwhile
            moved.add(pid)
        self.members |= moved
        return moved

    def usage_seconds(self) -> float | None:
        """CPU seconds the cgroup used so far (v2 ``cpu.stat``; v1 has it elsewhere)."""
        stat = self.path / "cpu.stat"
        if self.layout != "v2" or not stat.is_file():
            return None
        for line in stat.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        return None

    def close(self) -> None:
        """Move what is left back to the root and remove the cgroup."""
        if not self.path.is_dir():
            return
        procs = self.path / "cgroup.procs"
        for line in procs.read_text().split():
            try:
                (self.hierarchy / "cgroup.procs").write_text(line)
            except (ProcessLookupError, OSError):
                continue
        try:
            self.path.rmdir()
        except OSError as failure:
            print(f"cgroup {self.path} left in place: {failure}", flush=True)
