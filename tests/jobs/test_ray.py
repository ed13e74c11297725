"""The Ray integrations (RayCluster, RayJob, RayService): pod sets, life cycle, rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler.api.pipeline import review
from scheduler.jobs import AdmissionFacts, PodSetInfo, by_framework, for_object
from scheduler.jobs.actions import (
    CreateWorkload,
    FinishWorkload,
    ReleaseWorkload,
    RestoreJob,
    StartJob,
    SuspendJob,
)
from scheduler.jobs.controller import next_action
from scheduler.jobs.elastic import ScaleDownWorkload
from scheduler.jobs.raycluster import RAYCLUSTER
from scheduler.jobs.rayjob import RAYJOB
from scheduler.jobs.rayservice import RAYSERVICE
from scheduler.jobs.start_placement import FlavorPlacement
from tests.builders import ray_cluster, ray_job, ray_service
from tests.jobs.sample import admitted_workload

SPOT = {"spot": FlavorPlacement({"instance-type": "spot"})}


def counts(pod_sets: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(p["name"], p["count"]) for p in pod_sets]


def requests(pod_set: dict[str, Any]) -> list[dict[str, Any]]:
    return [c.get("resources", {}) for c in pod_set["template"]["spec"]["containers"]]


def test_the_three_kinds_are_registered_by_framework_and_kind() -> None:
    assert by_framework("ray.io/raycluster") is RAYCLUSTER
    assert by_framework("ray.io/rayjob") is RAYJOB
    assert by_framework("ray.io/rayservice") is RAYSERVICE
    assert for_object(ray_job("j").build()) is RAYJOB


def test_cluster_pod_sets_are_the_head_then_each_worker_group() -> None:
    cluster = (
        ray_cluster("c")
        .requests(cpu="1")
        .worker_group("small", replicas=3)
        .worker_group("tpu", replicas=2, hosts=4)
        .worker_group("default", replicas=None)
        .build()
    )
    assert counts(RAYCLUSTER.pod_sets(cluster)) == [
        ("head", 1),
        ("small", 3),
        ("tpu", 8),
        ("default", 1),
    ]
    assert requests(RAYCLUSTER.pod_sets(cluster)[0]) == [{"requests": {"cpu": "1"}}]


@pytest.mark.parametrize(
    ("annotations", "options", "want"),
    [
        ({"ray.io/ft-enabled": "True"}, {}, {"cpu": "1", "memory": "256Mi"}),
        (
            {},
            {"gcsFaultToleranceOptions": {"redisAddress": "r:6379"}},
            {"cpu": "1", "memory": "256Mi"},
        ),
        ({}, {}, {"cpu": "1"}),
    ],
)
def test_gcs_fault_tolerance_counts_kuberays_redis_cleanup_in_the_head(
    annotations: dict[str, str], options: dict[str, Any], want: dict[str, str]
) -> None:
    cluster = ray_cluster("c").annotations(annotations).requests(cpu="1").cluster_spec(**options)
    head = RAYCLUSTER.pod_sets(cluster.build())[0]
    assert requests(head)[0]["requests"] == want


def test_in_tree_autoscaling_counts_the_autoscaler_sidecar() -> None:
    cluster = ray_cluster("c").cluster_spec(enableInTreeAutoscaling=True).build()
    head = RAYCLUSTER.pod_sets(cluster)[0]
    assert head["template"]["spec"]["containers"][-1] == {
        "name": "autoscaler",
        "resources": {
            "requests": {"cpu": "500m", "memory": "512Mi"},
            "limits": {"cpu": "500m", "memory": "512Mi"},
        },
    }


def test_a_rayjob_adds_kuberays_default_submitter_in_k8s_job_mode() -> None:
    job = ray_job("j").worker_group("w", replicas=2).build()
    sets = RAYJOB.pod_sets(job)
    assert counts(sets) == [("head", 1), ("w", 2), ("submitter", 1)]
    submitter = sets[-1]["template"]["spec"]
    assert submitter["restartPolicy"] == "Never"
    (container,) = submitter["containers"]
    assert container["name"] == "ray-job-submitter" and container["image"] == "busybox"
    assert container["resources"]["requests"] == {"cpu": "500m", "memory": "200Mi"}
    custom = ray_job("j").spec(submitterPodTemplate={"spec": {"containers": [{"name": "s"}]}})
    assert RAYJOB.pod_sets(custom.build())[-1]["template"]["spec"]["containers"] == [{"name": "s"}]


def test_a_rayjob_in_sidecar_mode_counts_the_submitter_in_its_head() -> None:
    job = ray_job("j").spec(submissionMode="SidecarMode").build()
    (head,) = RAYJOB.pod_sets(job)
    assert [c["name"] for c in head["template"]["spec"]["containers"]] == [
        "ray-head",
        "ray-job-submitter",
    ]
    for mode in ("HTTPMode", "InteractiveMode"):
        assert counts(RAYJOB.pod_sets(ray_job("j").spec(submissionMode=mode).build())) == [
            ("head", 1)
        ]


def test_a_rayservice_is_its_cluster() -> None:
    service = ray_service("s").worker_group("w", replicas=2).build()
    assert counts(RAYSERVICE.pod_sets(service)) == [("head", 1), ("w", 2)]
    assert RAYSERVICE.is_suspended(service)
    assert service["spec"]["rayClusterConfig"]["suspend"] is True


def run_and_restore(kind: Any, obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    sets = kind.pod_sets(obj)
    infos = [
        PodSetInfo(p["name"], p["count"], {"instance-type": "spot"}, labels={"x": "y"})
        for p in sets
    ]
    started = kind.run_with(obj, infos)
    return started, kind.restore(kind.suspend(started), sets)


@pytest.mark.parametrize(
    "obj",
    [
        ray_cluster("c").worker_group("w").build(),
        ray_job("j").worker_group("w").build(),
        ray_service("s").worker_group("w").build(),
    ],
    ids=["RayCluster", "RayJob", "RayService"],
)
def test_starting_steers_every_group_and_restoring_puts_them_back(obj: dict[str, Any]) -> None:
    kind = for_object(obj)
    assert kind is not None
    started, restored = run_and_restore(kind, obj)
    assert not kind.is_suspended(started)
    templates = [p["template"] for p in kind.pod_sets(started)]
    assert all(t["spec"]["nodeSelector"] == {"instance-type": "spot"} for t in templates)
    assert all(t["metadata"]["labels"] == {"x": "y"} for t in templates)
    assert kind.is_suspended(restored)
    assert kind.pod_sets(restored) == kind.pod_sets(obj)


def test_a_started_rayjob_gets_the_default_submitter_steered() -> None:
    job = ray_job("j").build()
    started, restored = run_and_restore(RAYJOB, job)
    submitter = started["spec"]["submitterPodTemplate"]
    assert submitter["spec"]["nodeSelector"] == {"instance-type": "spot"}
    assert "nodeSelector" not in restored["spec"]["submitterPodTemplate"]["spec"]


@pytest.mark.parametrize(
    ("deployment", "job_status", "want"),
    [
        ("Running", "RUNNING", None),
        ("Complete", "SUCCEEDED", ("Succeeded", "done")),
        ("Failed", "FAILED", ("Failed", "done")),
        ("Failed", "", ("Failed", "done")),
    ],
)
def test_a_rayjob_is_finished_by_its_deployment_status(
    deployment: str, job_status: str, want: tuple[str, str] | None
) -> None:
    finished = RAYJOB.finished(
        ray_job("j").deployment_status(deployment, job_status, "done").build()
    )
    if want is None:
        assert not finished.finished
    else:
        assert finished.finished and (finished.reason, finished.message) == want


def test_what_still_runs() -> None:
    assert RAYJOB.active(ray_job("j").build()) == 0
    assert RAYJOB.active(ray_job("j").deployment_status("Suspended").build()) == 0
    assert RAYJOB.active(ray_job("j").deployment_status("Suspending").build()) == 1
    assert RAYCLUSTER.active({**ray_cluster("c").build(), "status": {"state": "ready"}}) == 1
    assert RAYCLUSTER.active({**ray_cluster("c").build(), "status": {"state": "suspended"}}) == 0
    ready = {"conditions": [{"type": "Ready", "status": "True"}]}
    assert RAYSERVICE.active({**ray_service("s").build(), "status": ready}) == 1
    assert not RAYCLUSTER.finished(ray_cluster("c").build()).finished
    assert not RAYSERVICE.finished(ray_service("s").build()).finished


def test_a_rayjob_on_an_existing_cluster_is_not_queued() -> None:
    job = ray_job("j").queue("q").spec(clusterSelector={"ray.io/cluster": "shared"}, suspend=False)
    raw = job.build()
    del raw["spec"]["rayClusterSpec"]
    assert RAYJOB.queue_name(raw) == ""
    assert RAYJOB.default(raw, queue=None, suspend=True)["spec"]["suspend"] is False
    assert next_action(raw, None, flavors={}) is None


def test_an_evicted_rayjob_is_suspended_restored_and_released_keeping_its_start_time() -> None:
    job = ray_job("j", "ns").uid("uid-j").queue("q").worker_group("w").build()
    workload = admitted_workload(job, {"head": 1, "w": 1, "submitter": 1})
    start = next_action(job, workload, flavors=SPOT)
    assert isinstance(start, StartJob)
    running = {**start.job, "status": {"jobDeploymentStatus": "Running", "startTime": "t"}}
    workload["status"]["conditions"].append(
        {"type": "Evicted", "status": "True", "reason": "Preempted", "message": "out"}
    )
    stop = next_action(running, workload, flavors=SPOT)
    assert isinstance(stop, SuspendJob)
    restore = next_action(stop.job, workload, flavors=SPOT)
    assert isinstance(restore, RestoreJob)
    assert not restore.clear_start_time, "a RayJob's start time does not block a restore"
    stopping = {**restore.job, "status": {"jobDeploymentStatus": "Suspending"}}
    assert next_action(stopping, workload, flavors=SPOT) is None
    stopped = {**restore.job, "status": {"jobDeploymentStatus": "Suspended"}}
    assert isinstance(next_action(stopped, workload, flavors=SPOT), ReleaseWorkload)


def test_a_finished_rayjob_finishes_its_workload() -> None:
    job = ray_job("j", "ns").uid("uid-j").queue("q").build()
    created = next_action(job, None, flavors={})
    assert isinstance(created, CreateWorkload)
    done = {
        **job,
        "spec": {**job["spec"], "suspend": False},
        "status": {"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED", "message": "ok"},
    }
    finish = next_action(done, created.workload, flavors={})
    assert isinstance(finish, FinishWorkload) and (finish.reason, finish.message) == (
        "Succeeded",
        "ok",
    )


# -- rules ---------------------------------------------------------------------------------


def rules(kind: Any, new: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    facts = AdmissionFacts()
    errors = (
        kind.validate_create(new, facts=facts)
        if old is None
        else kind.validate_update(new, old, facts=facts)
    )
    return [f"{e.rule} {e.field}" for e in errors]


ELASTIC = {"kueue.x-k8s.io/elastic-job": "true"}


def test_an_elastic_raycluster_may_autoscale_with_the_gate_on() -> None:
    cluster = ray_cluster("c").queue("q").annotations(ELASTIC)
    elastic = cluster.cluster_spec(enableInTreeAutoscaling=True).build()
    assert rules(RAYCLUSTER, elastic) == []
    gate_off = RAYCLUSTER.validate_create(elastic, facts=AdmissionFacts(elastic_jobs=False))
    assert [f"{e.rule} {e.field}" for e in gate_off] == ["RAY-1 spec.enableInTreeAutoscaling"]
    assert "only as an elastic job" in gate_off[0].message


def test_an_elastic_rayjob_or_rayservice_may_autoscale_with_the_gate_on() -> None:
    job = ray_job("j").queue("q").annotations(ELASTIC).cluster_spec(enableInTreeAutoscaling=True)
    service = ray_service("s").queue("q").annotations(ELASTIC)
    service.cluster_spec(enableInTreeAutoscaling=True)
    assert rules(RAYJOB, job.build()) == []
    assert rules(RAYSERVICE, service.build()) == []
    gate_off = AdmissionFacts(elastic_jobs=False)
    assert [f"{e.rule} {e.field}" for e in RAYJOB.validate_create(job.build(), facts=gate_off)] == [
        "RAY-1 spec.rayClusterSpec.enableInTreeAutoscaling"
    ]
    plain = ray_job("j").queue("q").cluster_spec(enableInTreeAutoscaling=True).build()
    assert rules(RAYJOB, plain) == ["RAY-1 spec.rayClusterSpec.enableInTreeAutoscaling"]


def elastic_rayjob(workers: int) -> dict[str, Any]:
    job = ray_job("j", "ns").uid("uid-j").queue("q").annotations(ELASTIC)
    job.cluster_spec(enableInTreeAutoscaling=True).worker_group("w", replicas=workers)
    return job.build()


def child_cluster(workers: int) -> dict[str, Any]:
    """The RayCluster KubeRay made for the RayJob, as its autoscaler left it."""
    cluster = ray_cluster("j-raycluster-x", "ns").worker_group("w", replicas=workers)
    return cluster.build()


def test_an_autoscaling_elastic_rayjob_follows_the_cluster_kuberay_made_for_it() -> None:
    job = elastic_rayjob(1)
    assert RAYJOB.scaling_child(job) is None, "no cluster yet"
    job["status"] = {"rayClusterName": "j-raycluster-x"}
    assert RAYJOB.scaling_child(job) == "j-raycluster-x"
    seen = RAYJOB.as_scaled(job, child_cluster(3))
    assert counts(RAYJOB.pod_sets(seen)) == [("head", 1), ("w", 3), ("submitter", 1)]
    assert job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] == 1, "a copy"
    not_elastic = copy.deepcopy(job)
    del not_elastic["metadata"]["annotations"]
    assert RAYJOB.scaling_child(not_elastic) is None
    fixed = copy.deepcopy(job)
    fixed["spec"]["rayClusterSpec"]["enableInTreeAutoscaling"] = False
    assert RAYJOB.scaling_child(fixed) is None


def running_rayjob(workers: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """An elastic RayJob with ``workers`` workers, admitted and started, and its Workload."""
    job = elastic_rayjob(workers)
    workload = admitted_workload(job, {"head": 1, "w": workers, "submitter": 1})
    start = next_action(job, workload, flavors=SPOT)
    assert isinstance(start, StartJob)
    return {**start.job, "status": {"rayClusterName": "j-raycluster-x"}}, workload


def test_an_autoscaled_elastic_rayjob_asks_for_a_new_slice_and_shrinks_in_place() -> None:
    running, workload = running_rayjob(1)
    gates = running["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"][
        "schedulingGates"
    ]
    assert {"name": "kueue.x-k8s.io/elastic-job"} in gates, "its cluster's pods wait for a slice"
    assert next_action(RAYJOB.as_scaled(running, child_cluster(1)), workload, flavors=SPOT) is None
    up = next_action(RAYJOB.as_scaled(running, child_cluster(2)), workload, flavors=SPOT)
    assert isinstance(up, CreateWorkload)
    assert counts(up.workload["spec"]["podSets"]) == [("head", 1), ("w", 2), ("submitter", 1)]
    three, admitted_three = running_rayjob(3)
    down = next_action(RAYJOB.as_scaled(three, child_cluster(2)), admitted_three, flavors=SPOT)
    assert isinstance(down, ScaleDownWorkload)
    assert down.difference == "pod set w: count 3 -> 2"


def test_an_autoscaling_elastic_rayservice_follows_its_active_cluster() -> None:
    service = ray_service("s", "ns").queue("q").annotations(ELASTIC)
    service.cluster_spec(enableInTreeAutoscaling=True).worker_group("w", replicas=1)
    built = service.build()
    built["status"] = {"activeServiceStatus": {"rayClusterName": "s-raycluster-a"}}
    assert RAYSERVICE.scaling_child(built) == "s-raycluster-a"
    assert counts(RAYSERVICE.pod_sets(RAYSERVICE.as_scaled(built, child_cluster(4)))) == [
        ("head", 1),
        ("w", 4),
    ]


def elastic_cluster(workers: int) -> dict[str, Any]:
    cluster = ray_cluster("c", "ns").uid("uid-c").queue("q").annotations(ELASTIC)
    cluster.cluster_spec(enableInTreeAutoscaling=True).worker_group("w", replicas=workers)
    return cluster.build()


def admitted_cluster(workers: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """An elastic RayCluster with ``workers`` workers, admitted and started, and its Workload."""
    workload = admitted_workload(elastic_cluster(workers), {"head": 1, "w": workers})
    start = next_action(elastic_cluster(workers), workload, flavors=SPOT)
    assert isinstance(start, StartJob)
    return start.job, workload


def scaled(cluster: dict[str, Any], workers: int) -> dict[str, Any]:
    """What KubeRay's autoscaler writes: the worker group's replicas."""
    result = copy.deepcopy(cluster)
    result["spec"]["workerGroupSpecs"][0]["replicas"] = workers
    return result


def test_an_elastic_raycluster_that_autoscales_down_keeps_running_on_fewer_pods() -> None:
    cluster, workload = admitted_cluster(3)
    gates = cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["schedulingGates"]
    assert {"name": "kueue.x-k8s.io/elastic-job"} in gates, "its pods wait for a slice"
    action = next_action(scaled(cluster, 1), workload, flavors=SPOT)
    assert isinstance(action, ScaleDownWorkload)
    assert action.difference == "pod set w: count 3 -> 1"


def test_an_elastic_raycluster_that_autoscales_up_asks_for_a_new_slice() -> None:
    cluster, workload = admitted_cluster(1)
    action = next_action(scaled(cluster, 2), workload, flavors=SPOT)
    assert isinstance(action, CreateWorkload)
    assert [(p["name"], p["count"]) for p in action.workload["spec"]["podSets"]] == [
        ("head", 1),
        ("w", 2),
    ]
    annotations = action.workload["metadata"]["annotations"]
    assert annotations["kueue.x-k8s.io/workload-slice-replacement-for"] == (
        f"ns/{workload['metadata']['name']}"
    )


def test_a_raycluster_that_is_not_elastic_and_changes_size_is_stopped() -> None:
    cluster, workload = admitted_cluster(1)
    plain = copy.deepcopy(cluster)
    del plain["metadata"]["annotations"]
    action = next_action(scaled(plain, 2), workload, flavors=SPOT, elastic_jobs=False)
    assert isinstance(action, SuspendJob)


def test_a_queued_cluster_may_not_autoscale_or_name_a_worker_group_head() -> None:
    cluster = ray_cluster("c").queue("q").cluster_spec(enableInTreeAutoscaling=True)
    cluster.worker_group("head")
    assert rules(RAYCLUSTER, cluster.build()) == [
        "RAY-1 spec.enableInTreeAutoscaling",
        "RAY-3 spec.workerGroupSpecs[0].groupName",
    ]
    unqueued = ray_cluster("c").cluster_spec(enableInTreeAutoscaling=True).build()
    assert rules(RAYCLUSTER, unqueued) == [], "not kuota's: its own business"


def test_too_many_groups_for_a_workload() -> None:
    cluster = ray_cluster("c").queue("q")
    for index in range(17):
        cluster.worker_group(f"g{index}")
    assert rules(RAYCLUSTER, cluster.build()) == []
    job = ray_job("j").queue("q")
    for index in range(17):
        job.worker_group(f"g{index}")
    assert rules(RAYJOB, job.build()) == ["RAY-2 spec.rayClusterSpec.workerGroupSpecs"], (
        "the submitter makes a 19th pod set"
    )


def test_a_queued_rayjob_needs_its_own_cluster_shut_down_after_it_finishes() -> None:
    keep = ray_job("j").queue("q").spec(shutdownAfterJobFinishes=False).build()
    assert rules(RAYJOB, keep) == ["RAYJOB-3 spec.shutdownAfterJobFinishes"]
    both = ray_job("j").queue("q").spec(clusterSelector={"ray.io/cluster": "c"}).build()
    assert rules(RAYJOB, both) == ["RAYJOB-1 spec.clusterSelector"]
    neither = ray_job("j").queue("q").build()
    del neither["spec"]["rayClusterSpec"]
    assert rules(RAYJOB, neither) == ["RAYJOB-2 spec.rayClusterSpec"]


def test_updates_follow_the_kinds_suspend_flag_and_skip_unqueued_objects() -> None:
    service = ray_service("s").queue("q").build()
    moved = copy.deepcopy(service)
    moved["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "other"
    assert rules(RAYSERVICE, moved, service) == [], "suspended: the queue may change"
    running = copy.deepcopy(service)
    running["spec"]["rayClusterConfig"]["suspend"] = False
    running_moved = copy.deepcopy(moved)
    running_moved["spec"]["rayClusterConfig"]["suspend"] = False
    assert rules(RAYSERVICE, running_moved, running) == [
        "JOB-U1 metadata.labels[kueue.x-k8s.io/queue-name]"
    ]
    bad = ray_cluster("c").cluster_spec(enableInTreeAutoscaling=True).build()
    assert rules(RAYCLUSTER, bad, bad) == [], "an update of an unqueued object is not judged"


def test_kuota_validate_reviews_ray_objects_like_the_webhook() -> None:
    result = review(ray_job("j").queue("q").spec(shutdownAfterJobFinishes=False).build())
    assert [e.rule for e in result.errors] == ["RAYJOB-3"]


def test_pods_ready_is_the_cluster_ready_as_kuberay_reports_it() -> None:
    """Kueue's PodsReady per Ray kind (docs/concepts.md#pods-ready)."""
    cluster = ray_cluster("c").build()
    assert not RAYCLUSTER.pods_ready(cluster)
    assert RAYCLUSTER.pods_ready({**cluster, "status": {"state": "ready"}})
    assert not RAYCLUSTER.pods_ready({**cluster, "status": {"state": "suspended"}})
    job = ray_job("j").build()
    assert not RAYJOB.pods_ready({**job, "status": {"jobDeploymentStatus": "Running"}})
    assert RAYJOB.pods_ready({**job, "status": {"rayClusterStatus": {"state": "ready"}}})
    service = ray_service("s").build()
    assert not RAYSERVICE.pods_ready({**service, "status": {"conditions": []}})
    ready = {"conditions": [{"type": "Ready", "status": "True"}]}
    assert RAYSERVICE.pods_ready({**service, "status": ready})
