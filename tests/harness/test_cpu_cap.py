"""The benchmark's CPU cap (benchmarks/kueue_perf/cpu_cap.py): the value it accepts,
the quota it writes, and what it does to a cgroup tree.

The trees are built under tmp_path with the files the kernel shows (cgroup v2's
``cgroup.controllers``, ``cgroup.subtree_control``; the v1 cpu hierarchy's
``cpu.cfs_quota_us``), and /proc is a fake with ``stat`` files, so what the cap
writes where can be read back without root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.kueue_perf.cpu_cap import CapError, CpuCap, cpu_max, descendants, parse_cpus


@pytest.mark.parametrize(
    ("text", "cpus"), [("1.5", 1.5), ("2", 2.0), (" 0.5 ", 0.5), ("", None), (None, None)]
)
def test_bench_cpus_is_a_number_of_cpus_or_nothing(text: str | None, cpus: float | None) -> None:
    assert parse_cpus(text) == cpus


@pytest.mark.parametrize("text", ["one", "0", "-1", "nan", "inf", "0.001"])
def test_a_bad_bench_cpus_is_refused_naming_it(text: str) -> None:
    with pytest.raises(CapError, match="BENCH_CPUS"):
        parse_cpus(text)


def test_the_quota_is_cpus_times_the_period() -> None:
    assert cpu_max(1.5) == "150000 100000"
    assert cpu_max(2) == "200000 100000"
    assert cpu_max(0.25, period_us=200_000) == "50000 200000"


def v2_root(tmp_path: Path, subtree: str = "") -> Path:
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text(subtree)
    (root / "cgroup.procs").write_text("")
    return root


def fake_proc(tmp_path: Path, parents: dict[int, int]) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    for pid, parent in parents.items():
        (proc / str(pid)).mkdir(parents=True)
        # A command name with a space and a parenthesis, as /proc may show.
        (proc / str(pid) / "stat").write_text(f"{pid} (kube (x) y) S {parent} {pid} 0 0\n")
    (proc / "self").mkdir()
    return proc


def test_v2_enables_the_cpu_controller_sets_cpu_max_and_moves_processes(tmp_path: Path) -> None:
    root = v2_root(tmp_path, subtree="memory\n")
    proc = fake_proc(tmp_path, {1: 0, 100: 1, 101: 100, 102: 101, 200: 1})
    cap = CpuCap(1.5, root=root, name="bench", proc=proc).open()
    assert cap.layout == "v2"
    assert (root / "cgroup.subtree_control").read_text() == "+cpu"
    assert (root / "bench" / "cpu.max").read_text() == "150000 100000"
    # 100 and its children and grandchildren; 200 is not below any of them.
    assert cap.add([100]) == {100, 101, 102}
    # The kernel takes one pid per write: the fake file keeps the last one.
    assert (root / "bench" / "cgroup.procs").read_text() == "102"


def test_v2_leaves_an_enabled_controller_alone(tmp_path: Path) -> None:
    root = v2_root(tmp_path, subtree="cpu memory\n")
    CpuCap(2, root=root, name="bench", proc=fake_proc(tmp_path, {})).open()
    assert (root / "cgroup.subtree_control").read_text() == "cpu memory\n"


def test_v2_without_the_cpu_controller_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("memory pids\n")
    with pytest.raises(CapError, match="cpu controller"):
        CpuCap(1.5, root=root)


def test_v1_sets_the_cfs_quota_and_period(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    (root / "cpu").mkdir(parents=True)
    (root / "cpu" / "cpu.cfs_quota_us").write_text("-1")
    (root / "cpu" / "cgroup.procs").write_text("")
    cap = CpuCap(0.5, root=root, name="bench", proc=fake_proc(tmp_path, {7: 1})).open()
    assert cap.layout == "v1"
    assert (root / "cpu" / "bench" / "cpu.cfs_quota_us").read_text() == "50000"
    assert (root / "cpu" / "bench" / "cpu.cfs_period_us").read_text() == "100000"
    assert cap.add([7]) == {7}


def test_no_cgroup_at_all_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CapError, match="no cgroup cpu controller"):
        CpuCap(1.5, root=tmp_path)


def test_close_moves_the_members_back_to_the_root(tmp_path: Path) -> None:
    root = v2_root(tmp_path, subtree="cpu")
    cap = CpuCap(1.5, root=root, name="bench", proc=fake_proc(tmp_path, {5: 1})).open()
    cap.add([5])
    cap.close()
    assert (root / "cgroup.procs").read_text() == "5"


def test_descendants_follow_parents_in_proc(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, {1: 0, 10: 1, 11: 10, 12: 11, 20: 1, 21: 20})
    assert descendants([10, 20], proc) == {10, 11, 12, 20, 21}
    assert descendants([99], proc) == {99}
