"""The pure parts of the side-by-side benchmark (benchmarks/kueue_perf): reading the
runner's summary the way Kueue's checker does, the table and its ratios, the scaled
config and the cache key of the Go build."""

from __future__ import annotations

from pathlib import Path

import yaml

from benchmarks.kueue_perf.__main__ import scaled_config
from benchmarks.kueue_perf.report import (
    ProcessUsage,
    RunResult,
    apiserver_requests,
    apply_summary,
    checker_failures,
    cq_usage_percent,
    parse_summary,
    render,
    rows,
    scheduler_metrics,
    webhook_metrics,
)
from benchmarks.kueue_perf.tools import build_info_marker, wrapper_go_mod
from webhook.metrics import WebhookMetrics

# As the runner writes it (recorder.Summary marshalled by sigs.k8s.io/yaml).
SUMMARY = """\
clusterQueueClasses:
  cq:
    cpuAverageUsage: 330000
    cpuUsed: 128700000000
    firstEventTime: "2026-11-25T20:00:00.000000000Z"
    lastEventTime: "2026-11-25T20:06:30.000000000Z"
    nominalQuota: 600000
droppedWorkloadEvents: 0
workloadClasses:
  large:
    averageTimeToAdmissionMs: 33000
    averageTimeToFinishMs: 34000
    count: 1500
    totalEvictions: 12
  medium:
    averageTimeToAdmissionMs: 104000
    averageTimeToFinishMs: 104500
    count: 3000
    totalEvictions: 3
  small:
    averageTimeToAdmissionMs: 229000
    averageTimeToFinishMs: 229200
    count: 10500
    totalEvictions: 0
"""


def result(side: str, wall: float, summary: str = SUMMARY, **processes: float) -> RunResult:
    run = RunResult(side=side, finished=True, wall_seconds=wall)
    apply_summary(run, parse_summary(summary))
    run.processes = {
        name: ProcessUsage(cpu_seconds=cpu, peak_rss_bytes=2**30) for name, cpu in processes.items()
    }
    return run


def test_cq_usage_is_the_checkers_formula() -> None:
    # cpuUsed * 100 / (nominalQuota * elapsedMs): 128.7e9 * 100 / (600000 * 390000) = 55 %
    assert cq_usage_percent(parse_summary(SUMMARY)) == {"cq": 55.0}


def test_summary_fills_admission_times_counts_and_evictions() -> None:
    run = result("kueue", 390.0)
    assert run.admission_ms == {"large": 33000, "medium": 104000, "small": 229000}
    assert run.workloads == {"large": 1500, "medium": 3000, "small": 10500}
    assert run.evictions == 15
    assert run.min_cq_usage_percent == 55.0


def test_rows_average_each_side_and_give_the_ratio() -> None:
    faster = SUMMARY.replace("averageTimeToAdmissionMs: 33000", "averageTimeToAdmissionMs: 16500")
    results = [
        result("kueue", 400.0, **{"kube-apiserver": 500.0}),
        result("kuota", 200.0, faster, **{"kube-apiserver": 250.0, "kuota-webhook": 10.0}),
        result("kueue", 380.0, **{"kube-apiserver": 540.0}),
        result("kuota", 240.0, faster, **{"kube-apiserver": 270.0, "kuota-webhook": 12.0}),
    ]
    table = {row[0]: row[1:] for row in rows(results)}
    assert table["wall time"] == ("400 s, 380 s", "200 s, 240 s", "0.56x")
    assert table["avg time to admission, large"] == ("33.0 s, 33.0 s", "16.5 s, 16.5 s", "0.50x")
    assert table["avg time to admission, small"][2] == "1.00x"
    assert table["CPU kube-apiserver"] == ("500 s, 540 s", "250 s, 270 s", "0.50x")
    # a process only one side has: no ratio
    assert table["CPU kuota-webhook"] == ("-, -", "10 s, 12 s", "-")
    assert table["runner finished (summary written)"] == ("yes, yes", "yes, yes", "")


def test_a_run_without_summary_says_so_and_has_no_figures() -> None:
    stuck = RunResult(side="kuota", finished=False, wall_seconds=900.0, unfinished=6)
    table = {row[0]: row[1:] for row in rows([result("kueue", 390.0), stuck])}
    assert table["runner finished (summary written)"] == ("yes", "NO", "")
    assert table["avg time to admission, large"] == ("33.0 s", "-", "-")
    assert table["checker (rangespec)"] == ("not run", "not run", "")
    assert "NO" in render([stuck])


def test_checker_failures_are_the_go_test_error_lines() -> None:
    output = """=== RUN   TestScalability
=== RUN   TestScalability/CommandStats
    checker_test.go:79: Wall time 500000ms is greater than maximum expected 425000ms
=== RUN   TestScalability/WorkloadClasses/small
    checker_test.go:109: Average wait for admission 300000ms is more then expected 260000ms
--- FAIL: TestScalability (0.00s)
FAIL
"""
    assert checker_failures(output) == [
        "Wall time 500000ms is greater than maximum expected 425000ms",
        "Average wait for admission 300000ms is more then expected 260000ms",
    ]


def test_scaled_config_multiplies_every_workload_set(tmp_path: Path) -> None:
    source = tmp_path / "generator.yaml"
    source.write_text(
        yaml.safe_dump(
            {
                "cohorts": [
                    {
                        "className": "cohort",
                        "count": 5,
                        "queuesSets": [
                            {
                                "className": "cq",
                                "count": 6,
                                "workloadsSets": [{"count": 350}, {"count": 100}, {"count": 5}],
                            }
                        ],
                    }
                ]
            }
        )
    )
    scaled = yaml.safe_load(scaled_config(source, tmp_path / "out.yaml", 0.1).read_text())
    counts = [s["count"] for s in scaled["cohorts"][0]["queuesSets"][0]["workloadsSets"]]
    assert counts == [35, 10, 1]
    assert scaled["cohorts"][0]["count"] == 5


def test_the_build_pins_kueue_and_checks_the_binaries_for_it() -> None:
    go_mod = wrapper_go_mod()
    assert "require sigs.k8s.io/kueue v0.19.2" in go_mod
    assert "sigs.k8s.io/kueue/test/performance/scheduler/runner" in go_mod
    assert build_info_marker() == b"sigs.k8s.io/kueue\tv0.19.2\t"


def test_scheduler_metrics_give_cycles_and_writes_with_their_mean() -> None:
    text = """# HELP kuota_cycle_duration_seconds ...
kuota_cycle_duration_seconds_bucket{le="0.01"} 10.0
kuota_cycle_duration_seconds_count 40.0
kuota_cycle_duration_seconds_sum 1.234
kuota_api_write_duration_seconds_count{resource="workloads",verb="apply"} 200.0
kuota_api_write_duration_seconds_sum{resource="workloads",verb="apply"} 10.0
kuota_api_write_duration_seconds_count{resource="clusterqueues",verb="patch"} 0.0
kuota_api_write_duration_seconds_sum{resource="clusterqueues",verb="patch"} 0.0
"""
    assert scheduler_metrics(text) == {
        "cycles": 40.0,
        "cycle seconds": 1.23,
        "writes apply workloads": 200.0,
        "mean ms apply workloads": 50.0,
        "writes patch clusterqueues": 0.0,
    }


def test_webhook_metrics_give_requests_their_mean_and_the_connections_closed() -> None:
    """Read from what the webhook itself renders, so a renamed metric fails here."""
    metrics = WebhookMetrics.create()
    metrics.observe("/convert", "allowed", 0.002)
    metrics.observe("/convert", "allowed", 0.004)
    metrics.observe("/validate-w", "denied", 0.001)
    metrics.evictions.labels(why="never_used").inc(3)
    metrics.connections.set(12)
    assert webhook_metrics(metrics.render().decode()) == {
        "requests /convert": 2.0,
        "mean ms /convert": 3.0,
        "requests /validate-w": 1.0,
        "mean ms /validate-w": 1.0,
        "connections closed never_used": 3.0,
        "connections open": 12.0,
    }


def test_apiserver_requests_count_writes_by_resource_and_webhook_calls() -> None:
    """Reads are left out; a status write is named with its subresource; webhook calls
    are summed over their labels (every conversion target, every operation)."""

    def sample(name: str, value: int, **labels: str) -> str:
        shown = ",".join(f'{key}="{label}"' for key, label in labels.items())
        return f"{name}{{{shown}}} {value}"

    requests = "apiserver_request_total"
    admission = "apiserver_admission_webhook_admission_duration_seconds_count"
    conversion = "apiserver_crd_conversion_webhook_duration_seconds_count"
    workloads = {"group": "kueue.x-k8s.io", "resource": "workloads"}
    text = "\n".join(
        [
            f"# TYPE {requests} counter",
            sample(requests, 30, code="200", subresource="status", verb="APPLY", **workloads),
            sample(requests, 2, code="409", subresource="status", verb="APPLY", **workloads),
            sample(requests, 10, code="201", subresource="", verb="POST", **workloads),
            sample(requests, 99, code="200", subresource="", verb="LIST", **workloads),
            sample(requests, 5, code="200", resource="events", verb="WATCH"),
            "# TYPE apiserver_admission_webhook_admission_duration_seconds histogram",
            sample(admission, 10, operation="CREATE", rejected="false", type="validating"),
            sample(admission, 3, operation="UPDATE", rejected="true", type="validating"),
            "# TYPE apiserver_crd_conversion_webhook_duration_seconds histogram",
            sample(conversion, 40, from_version="v1beta2", to_version="v1alpha1"),
            sample(conversion, 40, from_version="v1beta2", to_version="v1beta1"),
        ]
    )
    assert apiserver_requests(text) == {
        "APPLY workloads/status": 32.0,
        "POST workloads": 10.0,
        "admission webhook calls, validating": 13.0,
        "conversion webhook calls": 80.0,
    }
