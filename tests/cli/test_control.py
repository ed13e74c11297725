"""``kuota stop`` and ``kuota resume``: what they change, what they say, when they ask."""

from __future__ import annotations

import argparse
import io
from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.cli import control
from scheduler.cli.control import ControlFailed, plan
from scheduler.cli.main import build_parser
from tests.builders import cluster_queue, local_queue, workload


def cq(policy: str | None = None, **status: int) -> dict[str, Any]:
    builder = cluster_queue("research").resource_version(7)
    if policy:
        builder.stop_policy(policy)
    return builder.status(**status).build()


def test_stopping_a_cluster_queue_drains_it_unless_told_to_keep_what_runs() -> None:
    drained = plan("stop", "clusterqueue", cq(reservingWorkloads=3, pendingWorkloads=5))
    assert drained.patch == {
        "metadata": {"resourceVersion": "7"},
        "spec": {"stopPolicy": "HoldAndDrain"},
    }
    assert drained.change == "stopPolicy: None -> HoldAndDrain"
    assert drained.effects[:2] == (
        "ClusterQueue research admits nothing new (5 pending wait).",
        "Its 3 admitted Workload(s) are evicted and their jobs suspended; they wait in the"
        " queue again.",
    )
    assert (
        drained.confirm
        and drained.done == "clusterqueue/research stopped (stopPolicy: HoldAndDrain)"
    )
    held = plan("stop", "clusterqueue", cq(admittedWorkloads=2), keep_running=True)
    assert held.patch is not None and held.patch["spec"] == {"stopPolicy": "Hold"}
    assert "keep running until they finish" in held.effects[1]


def test_resume_clears_the_policy_and_asks_nothing_and_a_no_op_writes_nothing() -> None:
    resumed = plan("resume", "clusterqueue", cq("HoldAndDrain", pendingWorkloads=2))
    assert resumed.patch is not None and resumed.patch["spec"] == {"stopPolicy": "None"}
    assert not resumed.confirm
    assert plan("resume", "clusterqueue", cq()).patch is None
    assert plan("stop", "clusterqueue", cq("HoldAndDrain")).patch is None
    lq = local_queue("lq", "team").resource_version(3).build()
    assert plan("stop", "localqueue", lq).target == "localqueue/team/lq"
    assert "kuota resume localqueue lq -n team" in plan("stop", "localqueue", lq).effects[-1]


def test_stopping_a_workload_deactivates_it_and_says_what_it_held() -> None:
    admitted = workload("w", "team").resource_version(9).reserve_quota("research", "f").build()
    stopped = plan("stop", "workload", admitted)
    assert stopped.patch == {"metadata": {"resourceVersion": "9"}, "spec": {"active": False}}
    assert stopped.change == "active: true -> false"
    assert "holds quota in ClusterQueue research" in stopped.effects[0]
    waiting = workload("w", "team").resource_version(9).build()
    assert "leaves its queue" in plan("stop", "workload", waiting).effects[0]
    inactive = workload("w", "team").inactive().resource_version(9).build()
    assert plan("resume", "workload", inactive).patch == {
        "metadata": {"resourceVersion": "9"},
        "spec": {"active": True},
    }
    assert plan("stop", "workload", inactive).patch is None


class FakeCluster:
    def __init__(self, *objects: dict[str, Any]) -> None:
        self.objects = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects}
        self.patches: list[tuple[str, str, str | None, Mapping[str, Any]]] = []
        self.jobs: dict[tuple[str, str], str] = {}

    def read(self, kind: str, name: str, namespace: str | None) -> dict[str, Any]:
        try:
            return self.objects[(namespace, name)]
        except KeyError:
            raise ControlFailed(f"{kind} {name} not found") from None

    def workload_of_job(self, name: str, namespace: str) -> dict[str, Any]:
        return self.read("workload", self.jobs[(namespace, name)], namespace)

    def patch(
        self, kind: str, name: str, namespace: str | None, body: Mapping[str, Any]
    ) -> dict[str, Any]:
        self.patches.append((kind, name, namespace, body))
        return {}


def run(cluster: FakeCluster, *argv: str, answer: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    parser = build_parser()
    args: argparse.Namespace = parser.parse_args([*argv, "--kubeconfig", "/dev/null"])
    code = control.run(args, io.StringIO(answer), out, err, connect=lambda _: cluster)
    return code, out.getvalue(), err.getvalue()


def test_stop_asks_and_anything_but_yes_cancels() -> None:
    cluster = FakeCluster(cq(reservingWorkloads=1))
    code, out, _ = run(cluster, "stop", "cq", "research", answer="n\n")
    assert (code, cluster.patches) == (1, [])
    assert "Proceed? [y/N]" in out and out.rstrip().endswith("canceled: nothing changed")
    code, out, _ = run(cluster, "stop", "cq", "research", answer="y\n")
    assert code == 0 and cluster.patches[0][:3] == ("clusterqueue", "research", None)
    assert out.rstrip().endswith("clusterqueue/research stopped (stopPolicy: HoldAndDrain)")


def test_yes_dry_run_jobs_and_refusals() -> None:
    wl = workload("job-train-1", "team").resource_version(1).build()
    cluster = FakeCluster(wl, local_queue("lq", "team").resource_version(2).build())
    cluster.jobs[("team", "train")] = "job-train-1"
    code, out, _ = run(cluster, "stop", "job", "train", "-n", "team", "--dry-run")
    assert (code, cluster.patches) == (0, []) and "dry run: nothing changed" in out
    assert run(cluster, "stop", "job", "train", "-n", "team", "--yes")[0] == 0
    assert cluster.patches[-1] == (
        "workload",
        "job-train-1",
        "team",
        {"metadata": {"resourceVersion": "1"}, "spec": {"active": False}},
    )
    assert run(cluster, "resume", "lq", "lq", "-n", "team")[1].startswith(
        "localqueue/team/lq: nothing to do (None)"
    )
    code, _, err = run(cluster, "stop", "wl", "job-train-1", "-n", "team", "--keep-already-running")
    assert code == 1 and "applies to queues only" in err
    code, _, err = run(cluster, "stop", "lq", "missing", "-n", "team", "-y")
    assert code == 1 and err == "error: localqueue missing not found\n"


def test_both_commands_parse_and_only_queues_take_keep_already_running() -> None:
    parser = build_parser()
    resumed = parser.parse_args(["resume", "clusterqueue", "research"])
    assert (resumed.command, resumed.kind, resumed.yes) == ("resume", "clusterqueue", True)
    with pytest.raises(SystemExit):
        parser.parse_args(["resume", "cq", "research", "--keep-already-running"])
    with pytest.raises(SystemExit):
        parser.parse_args(["stop", "cohort", "x"])
