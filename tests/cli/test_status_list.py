"""``kuota list workloads`` and the helpers the live commands share, from raw dicts."""

from __future__ import annotations

import argparse
import io
from datetime import timedelta
from pathlib import Path

import yaml

from scheduler.cli.listing import render_workloads, run, workload_rows, workload_state
from scheduler.cli.live import (
    ClusterObjects,
    age,
    context_namespace,
    kubeconfig_path,
    owner_job_uid,
)
from scheduler.jobs.workload_from_job import workload_name
from tests.cli.live_builders import T0, research_pool

NOW = T0 + timedelta(minutes=5)
MESSAGE = (
    "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
    "ondemand, 1 more needed"
)


def test_rows_show_queue_cluster_queue_state_flavors_age_and_why() -> None:
    cluster = research_pool()
    cluster.job("team", "a", "user-queue", admitted=("research-pool", "ondemand"))
    waiting = cluster.job("team", "b", "user-queue", created=T0 + timedelta(minutes=2))
    cluster.pending_message(waiting, MESSAGE)
    cluster.job("other", "c", "user-queue")
    rows = workload_rows(cluster.objects, "team", NOW)
    assert rows == [
        [
            "team",
            workload_name("a", "uid-a"),
            "user-queue",
            "research-pool",
            "Admitted",
            "main[cpu=ondemand]",
            "4m",
            "-",
        ],
        [
            "team",
            workload_name("b", "uid-b"),
            "user-queue",
            "research-pool",
            "Pending",
            "-",
            "3m",
            MESSAGE,
        ],
    ]
    assert len(workload_rows(cluster.objects, None, NOW)) == 3


def test_the_table_drops_the_namespace_column_for_one_namespace() -> None:
    cluster = research_pool()
    waiting = cluster.job("team", "b", "user-queue")
    cluster.pending_message(waiting, MESSAGE)
    text = render_workloads(
        workload_rows(cluster.objects, "team", NOW), all_namespaces=False, namespace="team"
    )
    header, row = text.splitlines()
    assert header.split() == ["NAME", "QUEUE", "CLUSTERQUEUE", "STATE", "FLAVORS", "AGE", "MESSAGE"]
    assert row.startswith(workload_name("b", "uid-b") + "  user-queue  research-pool  Pending")
    assert row.endswith(MESSAGE)
    every = render_workloads(
        workload_rows(cluster.objects, None, NOW), all_namespaces=True, namespace=None
    )
    assert every.splitlines()[0].startswith("NAMESPACE  NAME")
    assert (
        render_workloads([], all_namespaces=False, namespace="x")
        == "No Workloads in namespace x.\n"
    )


def test_states_in_order_of_precedence() -> None:
    cluster = research_pool()
    finished = cluster.job(
        "team", "f", "user-queue", admitted=("research-pool", "ondemand"), finished=True
    )
    admitted = cluster.job("team", "a", "user-queue", admitted=("research-pool", "ondemand"))
    pending = cluster.job("team", "p", "user-queue")
    assert [workload_state(w) for w in (finished, admitted, pending)] == [
        "Finished",
        "Admitted",
        "Pending",
    ]
    admitted["status"]["conditions"].append(
        {"type": "Evicted", "status": "True", "reason": "Preempted"}
    )
    assert workload_state(admitted) == "Evicted"
    pending["spec"]["active"] = False
    assert workload_state(pending) == "Inactive"


def test_age_is_kubectl_short() -> None:
    assert [
        age(NOW - timedelta(seconds=s), NOW) for s in (5, 119, 120, 7199, 7200, 172799, 172800)
    ] == ["5s", "119s", "2m", "119m", "2h", "47h", "2d"]
    assert age(None, NOW) == "-"


def test_owner_job_by_reference_else_by_label() -> None:
    assert (
        owner_job_uid(
            {
                "metadata": {
                    "ownerReferences": [
                        {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u1"}
                    ]
                }
            }
        )
        == "u1"
    )
    assert owner_job_uid({"metadata": {"labels": {"kueue.x-k8s.io/job-uid": "u2"}}}) == "u2"
    assert owner_job_uid({"metadata": {}}) is None


def test_kubeconfig_flag_then_environment_then_home() -> None:
    home = Path("/home/me")
    assert kubeconfig_path("/x", {"KUBECONFIG": "/y"}, home) == "/x"
    assert kubeconfig_path(None, {"KUBECONFIG": "/y:/z"}, home) == "/y:/z"
    assert kubeconfig_path(None, {"KUBECONFIG": ""}, home) == "/home/me/.kube/config"
    assert kubeconfig_path(None, {}, home) == "/home/me/.kube/config"


def test_namespace_of_the_current_context(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "current-context": "b",
                "contexts": [
                    {"name": "a", "context": {"namespace": "wrong"}},
                    {"name": "b", "context": {"namespace": "team"}},
                ],
            }
        )
    )
    assert context_namespace(str(path)) == "team"
    path.write_text(
        yaml.safe_dump({"current-context": "a", "contexts": [{"name": "a", "context": {}}]})
    )
    assert context_namespace(str(path)) == "default"
    assert context_namespace(str(tmp_path / "missing")) == "default"


def test_run_lists_one_namespace_or_all() -> None:
    cluster = research_pool()
    cluster.job("team", "a", "user-queue")
    cluster.job("other", "b", "user-queue")

    def fetcher(path: str | None) -> ClusterObjects:
        return cluster.objects

    out = io.StringIO()
    args = argparse.Namespace(kubeconfig="/k", namespace="other", all_namespaces=False)
    assert run(args, io.StringIO(), out, io.StringIO(), fetcher=fetcher) == 0
    assert [line.split()[0] for line in out.getvalue().splitlines()] == [
        "NAME",
        workload_name("b", "uid-b"),
    ]
    out = io.StringIO()
    args = argparse.Namespace(kubeconfig="/k", namespace=None, all_namespaces=True)
    assert run(args, io.StringIO(), out, io.StringIO(), fetcher=fetcher) == 0
    assert [line.split()[0] for line in out.getvalue().splitlines()] == [
        "NAMESPACE",
        "other",
        "team",
    ]
