"""kuota's Grafana dashboard (``dashboards/kuota.json``), written from a short description.

The two questions the dashboard answers are an admin's: is the quota used
well, and who is starved?  Rows: what waits and what runs per queue; how long
workloads wait to be admitted; quota per ClusterQueue (use against nominal,
borrowing and lending limits, weighted shares) and per cohort; admissions,
evictions and preemptions; the scheduler's own health.  Every query names
Kueue's series (docs/metrics.md), so the dashboard works against Kueue too,
except the last row's ``kuota_`` series.  ``tests/chart`` checks that every
series a query names exists.

Run through ``charts/kuota/hack/generate.py``, which writes (or checks) it.
"""

from __future__ import annotations

import json
from typing import Any

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
CQ = 'cluster_queue=~"$cluster_queue"'
RATE = "$__rate_interval"


def _target(expr: str, legend: str) -> dict[str, Any]:
    return {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend, "refId": "A"}


def _panel(
    kind: str,
    title: str,
    description: str,
    targets: list[tuple[str, str]],
    *,
    width: int = 12,
    unit: str = "short",
) -> dict[str, Any]:
    panel: dict[str, Any] = {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "bottom"}},
        "gridPos": {"w": width, "h": 8},
        "targets": [],
    }
    for index, (expr, legend) in enumerate(targets):
        target = _target(expr, legend)
        target["refId"] = chr(ord("A") + index)
        panel["targets"].append(target)
    return panel


def _quantiles(series: str, by: str) -> list[tuple[str, str]]:
    return [
        (
            f"histogram_quantile({q}, sum by (le, {by}) (rate({series}_bucket{{{CQ}}}[{RATE}])))",
            f"p{int(q * 100)} {{{{{by}}}}}",
        )
        for q in (0.5, 0.9, 0.99)
    ]


ROWS: list[tuple[str, list[dict[str, Any]]]] = [
    (
        "Queues: what waits, what runs",
        [
            _panel(
                "stat",
                "Pending workloads",
                "Every pending workload of the selected ClusterQueues.",
                [(f"sum(kueue_pending_workloads{{{CQ}}})", "pending")],
                width=6,
            ),
            _panel(
                "stat",
                "Admitted and running",
                "Admitted, unfinished workloads of the selected ClusterQueues.",
                [(f"sum(kueue_admitted_active_workloads{{{CQ}}})", "admitted")],
                width=6,
            ),
            _panel(
                "stat",
                "Inactive ClusterQueues",
                "ClusterQueues that cannot admit (stopped, missing flavor or check).",
                [('sum(kueue_cluster_queue_status{status!="active"})', "inactive")],
                width=6,
            ),
            _panel(
                "stat",
                "Admissions per minute",
                "Admissions in the selected ClusterQueues.",
                [(f"sum(rate(kueue_admitted_workloads_total{{{CQ}}}[{RATE}])) * 60", "per min")],
                width=6,
            ),
            _panel(
                "timeseries",
                "Pending workloads by ClusterQueue",
                "Active: in the queue. Inadmissible: tried and parked until something "
                "changes (all of them while the ClusterQueue is inactive).",
                [
                    (
                        f"sum by (cluster_queue, status) (kueue_pending_workloads{{{CQ}}})",
                        "{{cluster_queue}} {{status}}",
                    )
                ],
            ),
            _panel(
                "timeseries",
                "Workloads holding quota",
                "Reserving: holding quota (admission checks included). Admitted: running.",
                [
                    (
                        f"sum by (cluster_queue) (kueue_reserving_active_workloads{{{CQ}}})",
                        "{{cluster_queue}} reserving",
                    ),
                    (
                        f"sum by (cluster_queue) (kueue_admitted_active_workloads{{{CQ}}})",
                        "{{cluster_queue}} admitted",
                    ),
                ],
            ),
            _panel(
                "timeseries",
                "Pending workloads by LocalQueue",
                "Who is waiting, per team: the LocalQueues' pending workloads.",
                [
                    (
                        "sum by (namespace, name) (kueue_local_queue_pending_workloads)",
                        "{{namespace}}/{{name}}",
                    )
                ],
                width=24,
            ),
        ],
    ),
    (
        "Waiting: how long until admitted",
        [
            _panel(
                "timeseries",
                "Time to admission",
                "From creation (or the last requeue) to admission.",
                _quantiles("kueue_admission_wait_time_seconds", "cluster_queue"),
                unit="s",
            ),
            _panel(
                "timeseries",
                "Time to quota reservation",
                "From creation (or the last requeue) to quota reservation.",
                _quantiles("kueue_quota_reserved_wait_time_seconds", "cluster_queue"),
                unit="s",
            ),
            _panel(
                "timeseries",
                "Time in admission checks",
                "From quota reservation to admission.",
                _quantiles("kueue_admission_checks_wait_time_seconds", "cluster_queue"),
                unit="s",
            ),
            _panel(
                "timeseries",
                "Time from admission to pods ready",
                "From admission to the first time all the job's pods are ready "
                "(empty without waitForPodsReady).",
                _quantiles("kueue_admitted_until_ready_wait_time_seconds", "cluster_queue"),
                unit="s",
            ),
            _panel(
                "timeseries",
                "Pending requests",
                "Resources the pending workloads ask for, before a flavor is chosen.",
                [
                    (
                        f"sum by (cluster_queue, resource) "
                        f"(kueue_cluster_queue_resource_pending{{{CQ}}})",
                        "{{cluster_queue}} {{resource}}",
                    )
                ],
                width=24,
            ),
        ],
    ),
    (
        "Quota: is it used well?",
        [
            _panel(
                "timeseries",
                "Use of nominal quota",
                "Quota in use divided by the nominal quota, per flavor and resource; above 1 "
                "the ClusterQueue borrows from its cohort.",
                [
                    (
                        f"sum by (cluster_queue, flavor, resource) "
                        f"(kueue_cluster_queue_resource_usage{{{CQ}}}) / sum by "
                        f"(cluster_queue, flavor, resource) "
                        f"(kueue_cluster_queue_nominal_quota{{{CQ}}} > 0)",
                        "{{cluster_queue}} {{flavor}} {{resource}}",
                    )
                ],
                unit="percentunit",
            ),
            _panel(
                "timeseries",
                "Borrowed",
                "Quota used above the nominal quota (taken from the cohort).",
                [
                    (
                        f"clamp_min(sum by (cluster_queue, flavor, resource) "
                        f"(kueue_cluster_queue_resource_reservation{{{CQ}}}) - sum by "
                        f"(cluster_queue, flavor, resource) "
                        f"(kueue_cluster_queue_nominal_quota{{{CQ}}}), 0)",
                        "{{cluster_queue}} {{flavor}} {{resource}}",
                    )
                ],
            ),
            _panel(
                "timeseries",
                "Weighted share",
                "Dominant resource share over the fair-sharing weight: 0 borrows nothing; "
                "the highest is the first to give back (fair sharing).",
                [
                    (
                        f"max by (cluster_queue) (kueue_cluster_queue_weighted_share{{{CQ}}})",
                        "{{cluster_queue}}",
                    ),
                    ("max by (cohort) (kueue_cohort_weighted_share)", "cohort {{cohort}}"),
                ],
            ),
            _panel(
                "timeseries",
                "Cohorts: quota and reservations",
                "A cohort's subtree quota against what its ClusterQueues reserve.",
                [
                    (
                        "sum by (cohort, flavor, resource) (kueue_cohort_subtree_quota)",
                        "{{cohort}} {{flavor}} {{resource}} quota",
                    ),
                    (
                        "sum by (cohort, flavor, resource) "
                        "(kueue_cohort_subtree_resource_reservations)",
                        "{{cohort}} {{flavor}} {{resource}} reserved",
                    ),
                ],
            ),
            _panel(
                "table",
                "Limits",
                "Nominal quota, borrowing and lending limits (+Inf: unset).",
                [
                    (f"kueue_cluster_queue_nominal_quota{{{CQ}}}", "nominal"),
                    (f"kueue_cluster_queue_borrowing_limit{{{CQ}}}", "borrowing limit"),
                    (f"kueue_cluster_queue_lending_limit{{{CQ}}}", "lending limit"),
                ],
                width=24,
            ),
        ],
    ),
    (
        "Churn: admissions, evictions, preemptions",
        [
            _panel(
                "timeseries",
                "Admissions and finishes",
                "Per minute.",
                [
                    (
                        f"sum by (cluster_queue) "
                        f"(rate(kueue_admitted_workloads_total{{{CQ}}}[{RATE}])) * 60",
                        "{{cluster_queue}} admitted",
                    ),
                    (
                        f"sum by (cluster_queue) "
                        f"(rate(kueue_finished_workloads_total{{{CQ}}}[{RATE}])) * 60",
                        "{{cluster_queue}} finished",
                    ),
                ],
            ),
            _panel(
                "timeseries",
                "Evictions by reason",
                "Per minute: preempted, stopped queue, deactivated, admission check...",
                [
                    (
                        f"sum by (cluster_queue, reason, underlying_cause) "
                        f"(rate(kueue_evicted_workloads_total{{{CQ}}}[{RATE}])) * 60",
                        "{{cluster_queue}} {{reason}} {{underlying_cause}}",
                    )
                ],
            ),
            _panel(
                "timeseries",
                "Preemptions by the preempting ClusterQueue",
                "Per minute, by why: within the queue, reclaiming, fair sharing.",
                [
                    (
                        f"sum by (preempting_cluster_queue, reason) "
                        f"(rate(kueue_preempted_workloads_total[{RATE}])) * 60",
                        "{{preempting_cluster_queue}} {{reason}}",
                    )
                ],
            ),
            _panel(
                "timeseries",
                "Eviction to quota released",
                "How long an evicted workload keeps its quota.",
                _quantiles("kueue_workload_eviction_latency_seconds", "cluster_queue"),
                unit="s",
            ),
        ],
    ),
    (
        "The scheduler",
        [
            _panel(
                "timeseries",
                "Scheduling cycles",
                "Per second, by whether they admitted something.",
                [
                    (
                        f"sum by (result) (rate(kueue_admission_attempts_total[{RATE}]))",
                        "{{result}}",
                    )
                ],
                width=8,
            ),
            _panel(
                "timeseries",
                "Cycle duration (p99)",
                "kuota's engine cycle.",
                [
                    (
                        "histogram_quantile(0.99, sum by (le) "
                        f"(rate(kuota_cycle_duration_seconds_bucket[{RATE}])))",
                        "p99",
                    )
                ],
                width=8,
                unit="s",
            ),
            _panel(
                "timeseries",
                "API write latency (p99)",
                "kuota's writes to the API server, by verb and resource.",
                [
                    (
                        "histogram_quantile(0.99, sum by (le, verb, resource) "
                        f"(rate(kuota_api_write_duration_seconds_bucket[{RATE}])))",
                        "{{verb}} {{resource}}",
                    )
                ],
                width=8,
                unit="s",
            ),
        ],
    ),
]


def dashboard() -> dict[str, Any]:
    """The dashboard as Grafana imports it: pure."""
    panels: list[dict[str, Any]] = []
    y = 0
    for number, (title, row) in enumerate(ROWS):
        panels.append(
            {
                "type": "row",
                "title": title,
                "collapsed": False,
                "gridPos": {"x": 0, "y": y, "w": 24, "h": 1},
                "id": 100 * (number + 1),
                "panels": [],
            }
        )
        y += 1
        x = 0
        for index, panel in enumerate(row):
            width = panel["gridPos"]["w"]
            if x + width > 24:
                x, y = 0, y + 8
            panel["gridPos"].update({"x": x, "y": y})
            panel["id"] = 100 * (number + 1) + index + 1
            panels.append(panel)
            x += width
        y += 8
    return {
        "title": "kuota",
        "uid": "kuota-queues",
        "description": "Queues, quota and waiting: Kueue's metrics, as kuota serves them.",
        "tags": ["kuota", "kueue"],
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "timezone": "",
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Data source",
                    "type": "datasource",
                    "query": "prometheus",
                },
                {
                    "name": "cluster_queue",
                    "label": "ClusterQueue",
                    "type": "query",
                    "datasource": DATASOURCE,
                    "query": "label_values(kueue_cluster_queue_status, cluster_queue)",
                    "refresh": 2,
                    "includeAll": True,
                    "multi": True,
                    "allValue": ".*",
                    "current": {"text": "All", "value": "$__all"},
                },
            ]
        },
        "annotations": {"list": []},
        "panels": panels,
    }


def dashboard_json() -> str:
    """The file's text: pure."""
    return json.dumps(dashboard(), indent=2, sort_keys=False) + "\n"
