"""AppWrappers (docs/concepts.md#appwrapper): pod sets of the wrapped objects, start, stop, end."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.jobs import PodSetInfo, by_framework, for_object
from scheduler.jobs.actions import StartJob
from scheduler.jobs.appwrapper import APPWRAPPER
from scheduler.jobs.appwrapper.components import PathError, infer, value_at
from scheduler.jobs.controller import next_action
from scheduler.jobs.protocol import NO_FACTS
from scheduler.jobs.start_placement import FlavorPlacement
from tests.jobs.sample import admitted_workload

QUEUE = {"kueue.x-k8s.io/queue-name": "lq"}
SPOT = {"spot": FlavorPlacement({"instance-type": "spot"})}


def pod_template(cpu: str = "200m") -> dict[str, Any]:
    return {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}
            ],
        }
    }


def batch_job(parallelism: int | None = 2, completions: int | None = 2) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": pod_template()}
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if completions is not None:
        spec["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job-0"}, "spec": spec}


def deployment(replicas: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "deployment"},
        "spec": {"replicas": replicas, "template": pod_template()},
    }


def appwrapper(*components: dict[str, Any], suspend: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "ns", "uid": "uid-aw", "labels": dict(QUEUE)},
        "spec": {"suspend": suspend, "components": list(components)},
    }


def counts(aw: dict[str, Any]) -> list[tuple[str, int]]:
    return [(p["name"], p["count"]) for p in APPWRAPPER.pod_sets(aw)]


def test_the_kind_is_registered_under_kueues_framework_name() -> None:
    assert by_framework("workload.codeflare.dev/appwrapper") is APPWRAPPER
    assert for_object(appwrapper()) is APPWRAPPER


def test_a_wrapped_job_runs_min_of_parallelism_and_completions() -> None:
    assert counts(appwrapper({"template": batch_job(4, 3)})) == [("aw-0", 3)]
    assert counts(appwrapper({"template": batch_job(2, None)})) == [("aw-0", 2)]
    assert counts(appwrapper({"template": batch_job(None, None)})) == [("aw-0", 1)]


def test_pod_sets_of_every_component_are_numbered_in_order() -> None:
    ray = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "spec": {
            "headGroupSpec": {"template": pod_template()},
            "workerGroupSpecs": [{"replicas": 2, "template": pod_template()}],
        },
    }
    aw = appwrapper({"template": batch_job()}, {"template": ray}, {"template": deployment(3)})
    assert counts(aw) == [("aw-0", 2), ("aw-1", 1), ("aw-2", 2), ("aw-3", 3)]
    template = APPWRAPPER.pod_sets(aw)[0]["template"]
    assert template["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "200m"}}


def test_declared_pod_sets_win_over_inference_and_the_controllers_status_over_both() -> None:
    declared = {"template": deployment(3), "podSets": [{"path": "template.spec.template"}]}
    assert counts(appwrapper(declared)) == [("aw-0", 1)], "replicas default to 1"
    recorded = appwrapper({"template": deployment(3)})
    recorded["status"] = {
        "componentStatus": [{"podSets": [{"path": "template.spec.template", "replicas": 5}]}]
    }
    assert counts(recorded) == [("aw-0", 5)]


def test_an_unknown_kind_has_no_pod_sets_and_a_bad_path_none_either() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "data": {}}
    assert counts(appwrapper({"template": config_map})) == []
    wrong = {"template": deployment(), "podSets": [{"path": "template.spec.nothing"}]}
    assert counts(appwrapper(wrong)) == []


def test_paths_read_fields_and_indexes_from_the_wrapped_object() -> None:
    obj = {"spec": {"groups": [{"n": 1}, {"n": 2}]}}
    assert value_at(obj, "template.spec.groups[1].n") == 2
    for bad in ("spec.groups", "template.spec.groups[2]", "template.spec.other"):
        with pytest.raises(PathError):
            value_at(obj, bad)
    with pytest.raises(PathError):
        infer({**deployment(), "spec": {"replicas": "3", "template": pod_template()}})


def admitted(aw: dict[str, Any]) -> dict[str, Any]:
    return admitted_workload(aw, {p["name"]: p["count"] for p in APPWRAPPER.pod_sets(aw)})


def test_the_workload_is_named_after_the_appwrapper_as_kueue_names_it() -> None:
    workload = admitted(appwrapper({"template": batch_job()}))
    assert workload["metadata"]["name"].startswith("appwrapper-aw-")
    assert workload["metadata"]["ownerReferences"][0]["kind"] == "AppWrapper"


def test_starting_writes_each_pod_sets_placement_into_its_component() -> None:
    aw = appwrapper({"template": batch_job()}, {"template": deployment(3)})
    start = next_action(aw, admitted(aw), flavors=SPOT)
    assert isinstance(start, StartJob)
    started = start.job
    assert started["spec"]["suspend"] is False
    first, second = (c["podSetInfos"] for c in started["spec"]["components"])
    assert first[0]["nodeSelector"] == {"instance-type": "spot"}
    assert first[0]["labels"]["kueue.x-k8s.io/podset"] == "aw-0"
    assert second[0]["labels"]["kueue.x-k8s.io/podset"] == "aw-1"
    assert started["spec"]["components"][0]["template"] == batch_job(), "never changed"


def test_restoring_clears_the_placement_and_suspending_suspends() -> None:
    aw = appwrapper({"template": batch_job()})
    started = APPWRAPPER.run_with(aw, [PodSetInfo("aw-0", 2, {"instance-type": "spot"})])
    stopped = APPWRAPPER.restore(APPWRAPPER.suspend(started), APPWRAPPER.pod_sets(aw))
    assert stopped["spec"]["suspend"] is True
    assert "podSetInfos" not in stopped["spec"]["components"][0]


@pytest.mark.parametrize(
    ("phase", "deployed", "finished"),
    [
        ("Running", "True", False),
        ("Succeeded", "True", True),
        ("Failed", "True", False),  # still deleting its resources
        ("Failed", "False", True),
    ],
)
def test_it_finishes_by_its_phase(phase: str, deployed: str, finished: bool) -> None:
    aw = appwrapper({"template": batch_job()})
    aw["status"] = {
        "phase": phase,
        "conditions": [{"type": "ResourcesDeployed", "status": deployed}],
    }
    assert APPWRAPPER.finished(aw).finished is finished


def test_a_queued_appwrapper_is_suspended_at_creation() -> None:
    defaulted = APPWRAPPER.default(appwrapper(suspend=False), queue=None, suspend=True)
    assert defaulted["spec"]["suspend"] is True


TAS_POD_INDEX = "workload.codeflare.dev.appwrapper/tas-pod-index-label"
TAS_SUB_GROUP_INDEX = "workload.codeflare.dev.appwrapper/tas-sub-group-index-label"
TAS_SUB_GROUP_COUNT = "workload.codeflare.dev.appwrapper/tas-sub-group-count"
REQUIRED_RACK = {"kueue.x-k8s.io/podset-required-topology": "cloud.provider.com/rack"}


def with_annotations(obj: dict[str, Any], template_at: list[str | int]) -> dict[str, Any]:
    cursor: Any = obj
    for step in template_at:
        cursor = cursor[step]
    cursor.setdefault("metadata", {})["annotations"] = dict(REQUIRED_RACK)
    return obj


def test_a_wrapped_job_asking_for_a_rack_is_numbered_by_its_completion_index() -> None:
    job = with_annotations(batch_job(), ["spec", "template"])
    (pod_set,) = APPWRAPPER.pod_sets(appwrapper({"template": job}))
    assert pod_set["topologyRequest"] == {
        "required": "cloud.provider.com/rack",
        "podIndexLabel": "batch.kubernetes.io/job-completion-index",
    }


def test_a_wrapped_jobset_is_numbered_by_completion_index_within_each_job() -> None:
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "spec": {
            "replicatedJobs": [
                {"name": "w", "replicas": 3, "template": {"spec": {"template": pod_template()}}}
            ]
        },
    }
    with_annotations(jobset, ["spec", "replicatedJobs", 0, "template", "spec", "template"])
    (pod_set,) = APPWRAPPER.pod_sets(appwrapper({"template": jobset}))
    assert pod_set["count"] == 3
    assert pod_set["topologyRequest"] == {
        "required": "cloud.provider.com/rack",
        "podIndexLabel": "batch.kubernetes.io/job-completion-index",
        "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
        "subGroupCount": 3,
    }


def test_declared_pod_set_annotations_say_how_its_pods_are_numbered() -> None:
    template = with_annotations(deployment(4), ["spec", "template"])
    numbering = {
        TAS_POD_INDEX: "example.com/rank",
        TAS_SUB_GROUP_INDEX: "example.com/group",
        TAS_SUB_GROUP_COUNT: "2",
    }
    declared = {
        "template": template,
        "podSets": [{"path": "template.spec.template", "replicas": 4, "annotations": numbering}],
    }
    (pod_set,) = APPWRAPPER.pod_sets(appwrapper(declared))
    assert pod_set["topologyRequest"] == {
        "required": "cloud.provider.com/rack",
        "podIndexLabel": "example.com/rank",
        "subGroupIndexLabel": "example.com/group",
        "subGroupCount": 2,
    }
    plain = {"template": deployment(4), "podSets": [{"path": "template.spec.template"}]}
    assert "topologyRequest" not in APPWRAPPER.pod_sets(appwrapper(plain))[0]


@pytest.mark.parametrize("count", ["two", "0", "-1", "1_000", 2])
def test_a_sub_group_count_that_is_not_a_positive_integer_is_refused(count: object) -> None:
    declared = {
        "template": deployment(2),
        "podSets": [
            {"path": "template.spec.template", "annotations": {TAS_SUB_GROUP_COUNT: count}}
        ],
    }
    errors = APPWRAPPER.validate_create(appwrapper(declared), facts=NO_FACTS)
    assert [(e.rule, e.field) for e in errors] == [
        (
            "AW-1",
            f"spec.components[0].podSets[0].annotations[{TAS_SUB_GROUP_COUNT}]",
        )
    ]
    assert "positive integer" in errors[0].message


def test_a_positive_sub_group_count_is_accepted() -> None:
    declared = {
        "template": deployment(2),
        "podSets": [{"path": "template.spec.template", "annotations": {TAS_SUB_GROUP_COUNT: "2"}}],
    }
    assert APPWRAPPER.validate_create(appwrapper(declared), facts=NO_FACTS) == []
