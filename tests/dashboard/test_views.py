"""The dashboard's views from raw cluster dicts: positions, reasons, quota, the cohort tree."""

from __future__ import annotations

from datetime import timedelta

from scheduler.cli.explain import explain_workload
from scheduler.cli.explain_target import Target
from scheduler.dashboard import views
from scheduler.dashboard.analysis import Analysis
from scheduler.dashboard.history import History
from tests.cli.live_builders import T0, LiveCluster, research_pool

NOW = T0 + timedelta(minutes=5)


def full_pool() -> LiveCluster:
    cluster = research_pool()
    for name, flavor in (("a", "ondemand"), ("b", "ondemand"), ("c", "spot"), ("d", "spot")):
        cluster.job("team", name, "user-queue", admitted=("research-pool", flavor))
    return cluster


def node(name: str, labels: dict[str, str]) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def test_a_waiting_workload_has_its_position_and_the_engines_reason() -> None:
    cluster = full_pool()
    cluster.job("team", "old", "user-queue", created=T0 + timedelta(seconds=10))
    cluster.job("team", "urgent", "user-queue", created=T0 + timedelta(seconds=20), priority=100)
    analysis = Analysis.of(cluster.objects, NOW)
    rows = views.workloads(cluster.objects, analysis, None)
    pending = [row for row in rows if row["state"] == "Pending"]
    assert [(row["job"], row["position"], row["pendingIn"]) for row in pending] == [
        ("job/urgent", 1, 2),
        ("job/old", 2, 2),
    ]
    assert {row["reason"] for row in pending} == {"WaitingForQuota"}
    assert pending[0]["message"].startswith("couldn't assign flavors to pod set main")
    admitted = [row for row in rows if row["state"] == "Admitted"]
    assert len(admitted) == 4 and all(row["position"] is None for row in admitted)


def test_the_detail_is_kuota_explains_own_text() -> None:
    cluster = full_pool()
    waiting = cluster.job("team", "late", "user-queue")
    analysis = Analysis.of(cluster.objects, NOW)
    name = waiting["metadata"]["name"]
    detail = views.workload_detail(cluster.objects, analysis, "team", name, NOW)
    assert detail is not None
    job = next(j for j in cluster.objects.jobs if j["metadata"]["name"] == "late")
    assert detail["explanation"] == explain_workload(cluster.objects, Target(job, waiting), NOW)
    assert detail["position"] == 1 and detail["job"] == "job/late"
    assert views.workload_detail(cluster.objects, analysis, "team", "absent", NOW) is None


def test_namespaces_limit_what_is_listed() -> None:
    cluster = full_pool()
    cluster.local_queue("other", "user-queue", "research-pool")
    cluster.job("other", "elsewhere", "user-queue")
    analysis = Analysis.of(cluster.objects, NOW)
    shown = views.workloads(cluster.objects, analysis, {"other"})
    assert [row["job"] for row in shown] == ["job/elsewhere"]
    assert [q["namespace"] for q in views.local_queues(cluster.objects, analysis, {"other"})] == [
        "other"
    ]
    assert views.overview(cluster.objects, analysis, {"team"})["workloads"] == {"Admitted": 4}


def test_cluster_queue_quota_use_and_limits() -> None:
    cluster = full_pool()
    cluster.job("team", "late", "user-queue")
    analysis = Analysis.of(cluster.objects, NOW)
    (queue,) = views.cluster_queues(cluster.objects, analysis)
    assert (queue["name"], queue["active"], queue["pending"], queue["admitted"]) == (
        "research-pool",
        True,
        1,
        4,
    )
    assert [
        (r["flavor"], r["reserved"]["text"], r["nominal"]["value"]) for r in queue["quota"]
    ] == [
        ("ondemand", "2", 2.0),
        ("spot", "2", 2.0),
    ]
    assert queue["quota"][0]["borrowingLimit"] is None
    assert queue["localQueues"] == ["team/user-queue"]


def test_the_cohort_tree_says_what_each_queue_lends_and_borrows() -> None:
    cluster = (
        LiveCluster()
        .flavor("ondemand", {"instance-type": "ondemand"})
        .cluster_queue("borrower", [("ondemand", {"cpu": "1"})], cohort="lab")
        .cluster_queue("lender", [("ondemand", {"cpu": "3"})], cohort="lab")
        .local_queue("team", "q", "borrower")
    )
    cluster.job("team", "big", "q", cpu="3", admitted=("borrower", "ondemand"))
    analysis = Analysis.of(cluster.objects, NOW)
    (root,) = views.cohorts(analysis)
    assert (root["name"], root["kind"]) == ("lab", "Cohort")
    children = {child["name"]: child for child in root["children"]}
    borrower = children["borrower"]["resources"][0]
    lender = children["lender"]["resources"][0]
    assert (borrower["usage"]["text"], borrower["borrows"]["text"], borrower["lends"]["text"]) == (
        "3",
        "2",
        "1",
    )
    assert (lender["usage"]["text"], lender["borrows"]["text"], lender["lends"]["text"]) == (
        "0",
        "0",
        "3",
    )
    assert children["borrower"]["weightedShare"] > 0 == children["lender"]["weightedShare"]


def test_flavors_name_their_queues_and_nodes() -> None:
    cluster = research_pool()
    nodes = [
        node("n1", {"instance-type": "ondemand"}),
        node("n2", {"instance-type": "spot"}),
    ]
    flavors = views.resource_flavors(cluster.objects, nodes)
    assert [(f["name"], f["clusterQueues"], f["nodes"]) for f in flavors] == [
        ("ondemand", ["research-pool"], ["n1"]),
        ("spot", ["research-pool"], ["n2"]),
    ]
    assert views.resource_flavors(cluster.objects)[0]["nodes"] is None


def test_history_keeps_the_last_samples() -> None:
    cluster = full_pool()
    analysis = Analysis.of(cluster.objects, NOW)
    history = History(2)
    for minute in range(3):
        history.add(analysis, NOW + timedelta(minutes=minute))
    samples = history.view()
    assert len(samples) == 2
    usage = samples[-1]["clusterQueues"]["research-pool"]["usage"]
    assert usage["ondemand/cpu"] == {"reserved": 2.0, "nominal": 2.0}
    assert history.view({"nothing"})[0]["clusterQueues"] == {}
