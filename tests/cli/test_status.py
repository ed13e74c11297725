"""``kuota status`` from raw cluster dicts: the usage bars and the per-queue report."""

from __future__ import annotations

import argparse
import io
from datetime import timedelta

from scheduler.api.quantity import Quantity
from scheduler.cli.live import ClusterObjects
from scheduler.cli.status import (
    QueueSummary,
    UsageRow,
    bar,
    render_queue,
    render_status,
    render_workers,
    run,
    summarize,
)
from tests.cli.live_builders import T0, research_pool

NOW = T0 + timedelta(minutes=5)


def test_bar_is_proportional_and_rounded_to_the_nearest_cell() -> None:
    assert bar(0, 4, width=4) == "[....]"
    assert bar(1, 4, width=4) == "[#...]"
    assert bar(2, 4, width=4) == "[##..]"
    assert bar(4, 4, width=4) == "[####]"
    assert bar(1, 3, width=10) == "[###.......]"


def test_bar_shows_any_use_and_marks_borrowing() -> None:
    assert bar(1, 1000, width=10) == "[#.........]"
    assert bar(6, 4, width=4) == "[####]+"
    assert bar(0, 0, width=3) == "[...]"
    assert bar(1, 0, width=3) == "[###]+"


def test_usage_comes_from_the_admitted_workloads_status() -> None:
    cluster = research_pool()
    cluster.job("team", "a", "user-queue", cpu="1500m", admitted=("research-pool", "ondemand"))
    cluster.job("team", "b", "user-queue", cpu="1", admitted=("research-pool", "spot"))
    cluster.job("team", "c", "user-queue", cpu="2")
    (summary,) = summarize(cluster.objects, NOW)
    assert (summary.name, summary.pending, summary.admitted) == ("research-pool", 1, 2)
    assert [
        (row.flavor, row.resource, str(row.used), str(row.nominal)) for row in summary.rows
    ] == [("ondemand", "cpu", "1500m", "2"), ("spot", "cpu", "1", "2")]
    assert summary.local_queues == ("team/user-queue",)


def test_finished_workloads_release_their_quota() -> None:
    cluster = research_pool()
    cluster.job("team", "a", "user-queue", admitted=("research-pool", "ondemand"), finished=True)
    cluster.job("team", "b", "user-queue", admitted=("research-pool", "ondemand"))
    (summary,) = summarize(cluster.objects, NOW)
    assert summary.admitted == 1
    assert str(summary.rows[0].used) == "1"


def test_the_report_a_user_reads() -> None:
    cluster = research_pool()
    cluster.job("team", "a", "user-queue", admitted=("research-pool", "ondemand"))
    cluster.job("team", "b", "user-queue", admitted=("research-pool", "ondemand"))
    cluster.job("team", "c", "user-queue", admitted=("research-pool", "spot"))
    cluster.job("team", "d", "user-queue", cpu="2")
    assert render_status(summarize(cluster.objects, NOW)) == (
        "ClusterQueue research-pool  pending 1  admitted 3\n"
        "  FLAVOR    RESOURCE  USAGE                    USED/QUOTA\n"
        "  ondemand  cpu       [####################]   2/2 (100%)\n"
        "  spot      cpu       [##########..........]   1/2 (50%)\n"
        "  LocalQueues: team/user-queue\n"
    )


def test_borrowing_and_inactive_queues_are_said() -> None:
    summary = QueueSummary(
        name="team-a",
        cohort="all",
        pending=0,
        admitted=2,
        active=False,
        inactive_message="Can't admit new workloads: references missing ResourceFlavor(s): gpu",
        rows=(UsageRow("default", "memory", Quantity.parse("6Gi"), Quantity.parse("4Gi")),),
        local_queues=(),
    )
    lines = render_queue(summary)
    assert lines[0] == "ClusterQueue team-a  pending 0  admitted 2  cohort all"
    assert (
        lines[1]
        == "  inactive: Can't admit new workloads: references missing ResourceFlavor(s): gpu"
    )
    assert lines[3].endswith("[####################]+  6Gi/4Gi (150%), borrowing 2Gi")


def test_queues_are_sorted_and_an_empty_cluster_says_so() -> None:
    assert render_status([]) == "No ClusterQueues.\n"
    cluster = research_pool().cluster_queue("alpha", [("ondemand", {"cpu": "1"})])
    assert [summary.name for summary in summarize(cluster.objects, NOW)] == [
        "alpha",
        "research-pool",
    ]


def test_an_object_the_pipeline_rejects_is_left_out_with_a_note() -> None:
    cluster = research_pool()
    cluster.objects.cluster_queues.append(
        {
            "metadata": {"name": "broken"},
            "spec": {
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": "ondemand",
                                "resources": [{"name": "cpu", "nominalQuota": "-1"}],
                            }
                        ],
                    }
                ]
            },
        }
    )
    notes: list[str] = []
    summaries = summarize(cluster.objects, NOW, notes)
    assert [summary.name for summary in summaries] == ["research-pool"]
    assert any("ClusterQueue/broken" in note for note in notes), notes


def test_run_reads_through_the_fetcher_and_reports_unreachable_clusters() -> None:
    args = argparse.Namespace(kubeconfig="/nowhere/config")
    out, err = io.StringIO(), io.StringIO()
    seen: list[str | None] = []

    def fetcher(path: str | None) -> ClusterObjects:
        seen.append(path)
        return research_pool().objects

    assert run(args, io.StringIO(), out, err, fetcher=fetcher) == 0
    assert seen == ["/nowhere/config"]
    assert out.getvalue().startswith("ClusterQueue research-pool  pending 0  admitted 0\n")

    def broken(path: str | None) -> ClusterObjects:
        raise ConnectionRefusedError("Connect call failed ('127.0.0.1', 6443)")

    out, err = io.StringIO(), io.StringIO()
    assert run(args, io.StringIO(), out, err, fetcher=broken) == 1
    assert err.getvalue() == (
        "error: cannot read the cluster through /nowhere/config: "
        "ConnectionRefusedError: Connect call failed ('127.0.0.1', 6443)\n"
    )


def test_worker_clusters_are_listed_with_their_connection() -> None:
    objects = ClusterObjects(
        multikueue_clusters=[
            {
                "metadata": {"name": "onprem-worker"},
                "status": {
                    "conditions": [{"type": "Active", "status": "True", "message": "Connected"}]
                },
            },
            {"metadata": {"name": "cloud-worker"}},
        ],
    )
    assert render_workers(objects) == (
        "MultiKueue worker clusters\n"
        "  cloud-worker  connected Unknown: no status yet (is its controller running?)\n"
        "  onprem-worker  connected True: Connected\n"
    )
    assert render_workers(ClusterObjects()) == ""


def test_admission_checks_of_a_queue_are_listed_with_how_they_stand() -> None:
    cluster = research_pool()
    (queue,) = cluster.objects.cluster_queues
    queue["spec"]["admissionChecksStrategy"] = {
        "admissionChecks": [{"name": "prov"}, {"name": "gone"}]
    }
    cluster.objects.admission_checks.append(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "AdmissionCheck",
            "metadata": {"name": "prov"},
            "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request"},
            "status": {
                "conditions": [
                    {
                        "type": "Active",
                        "status": "False",
                        "reason": "ControllerNotSupported",
                        "message": "not run here",
                        "lastTransitionTime": "2025-03-01T12:00:00Z",
                    }
                ]
            },
        }
    )
    (summary,) = summarize(cluster.objects, NOW)
    lines = render_queue(summary)
    assert lines[1] == (
        "  inactive: Can't admit new workloads: references missing AdmissionCheck(s): gone, "
        "references inactive AdmissionCheck(s): prov."
    )
    assert lines[2:4] == [
        "  admission check prov: kueue.x-k8s.io/provisioning-request, inactive "
        "(ControllerNotSupported): not run here",
        "  admission check gone: missing",
    ]


def test_workloads_waiting_for_admission_checks_are_counted_apart() -> None:
    summary = QueueSummary(
        name="q",
        cohort=None,
        pending=1,
        admitted=2,
        active=True,
        inactive_message="",
        rows=(),
        local_queues=(),
        reserving=3,
    )
    assert render_queue(summary)[0] == (
        "ClusterQueue q  pending 1  admitted 2  waiting for admission checks 1"
    )
