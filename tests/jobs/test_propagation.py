"""What a job carries over to its Workload (docs/concepts.md#from-job-to-workload): the
labels ``integrations.labelKeysToCopy`` lists, the ``kueue.x-k8s.io/admission-gated-by``
annotation, and a changed ``kueue.x-k8s.io/priority-class`` label."""

from __future__ import annotations

from typing import Any

from scheduler.api.config_file import load_configuration
from scheduler.api.custom_labels import CopiedMetadata, copied_metadata
from scheduler.jobs.actions import CreateWorkload, PropagateToWorkload
from scheduler.jobs.controller import next_action
from scheduler.jobs.pod import gate
from scheduler.jobs.pod.group import next_group_action
from scheduler.jobs.workload_from_job import PriorityClasses
from tests.builders import pod_group
from tests.jobs.sample import FLAVORS, admit, train

GATE = "kueue.x-k8s.io/admission-gated-by"
PRIORITY = "kueue.x-k8s.io/priority-class"
CLASSES = PriorityClasses(workload={"low": 100, "high": 300}, pod={"pod-high": 1000})


def created(j: dict[str, Any], **options: Any) -> dict[str, Any]:
    action = next_action(j, None, flavors=FLAVORS, priority_classes=CLASSES, **options)
    assert isinstance(action, CreateWorkload)
    return action.workload


def test_the_listed_labels_are_copied_when_the_workload_is_made() -> None:
    j = train().labels({"team": "ml", "cost-center": "42", "other": "x"}).build()
    workload = created(j, copied=CopiedMetadata(labels=("team", "cost-center", "absent")))
    assert workload["metadata"]["labels"] == {
        "team": "ml",
        "cost-center": "42",
        "kueue.x-k8s.io/job-uid": "uid-1",
    }
    assert created(j)["metadata"]["labels"] == {"kueue.x-k8s.io/job-uid": "uid-1"}


def test_the_job_uid_label_is_never_taken_from_the_job() -> None:
    j = train().labels({"kueue.x-k8s.io/job-uid": "forged"}).build()
    labels = created(j, copied=CopiedMetadata(labels=("kueue.x-k8s.io/job-uid",)))["metadata"][
        "labels"
    ]
    assert labels == {"kueue.x-k8s.io/job-uid": "uid-1"}


def test_pods_of_a_group_must_agree_on_a_copied_label() -> None:
    pods = [gate(p.queue("q").labels(team="ml").build()) for p in pod_group("g", 2)]
    action = next_group_action(pods, None, flavors=FLAVORS, copied=CopiedMetadata(labels=("team",)))
    assert isinstance(action, CreateWorkload)
    assert action.workload["metadata"]["labels"] == {"team": "ml"}
    pods[1]["metadata"]["labels"]["team"] = "infra"
    assert (
        next_group_action(pods, None, flavors=FLAVORS, copied=CopiedMetadata(labels=("team",)))
        is None
    )


def test_the_annotations_a_workload_custom_label_reads_are_copied() -> None:
    j = train().annotations({"team-annotation": "ml", "other": "x"}).build()
    workload = created(j, copied=CopiedMetadata(annotations=("team-annotation",)))
    assert workload["metadata"]["annotations"] == {"team-annotation": "ml"}


def test_pods_of_a_group_must_agree_on_a_copied_annotation() -> None:
    pods = [gate(p.queue("q").annotations(team="ml").build()) for p in pod_group("g", 2)]
    copied = CopiedMetadata(annotations=("team",))
    action = next_group_action(pods, None, flavors=FLAVORS, copied=copied)
    assert isinstance(action, CreateWorkload)
    assert action.workload["metadata"]["annotations"]["team"] == "ml"
    pods[1]["metadata"]["annotations"]["team"] = "infra"
    assert next_group_action(pods, None, flavors=FLAVORS, copied=copied) is None


def _configuration(gate_on: bool) -> Any:
    return load_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "featureGates": {"CustomMetricLabels": gate_on},
            "integrations": {"labelKeysToCopy": ["team"]},
            "metrics": {
                "customLabels": [
                    {"name": "tier", "sourceKind": "Workload", "trackedValues": ["gold"]},
                    {
                        "name": "owner",
                        "sourceAnnotationKey": "example.com/owner",
                        "sourceKind": "Workload",
                        "trackedValues": ["ann"],
                    },
                    {"name": "site", "sourceLabelKey": "example.com/site"},
                ]
            },
        }
    ).config


def test_workload_custom_labels_widen_what_is_copied_only_with_their_gate() -> None:
    assert copied_metadata(_configuration(True)) == CopiedMetadata(
        labels=("team", "tier"), annotations=("example.com/owner",)
    )
    assert copied_metadata(_configuration(False)) == CopiedMetadata(labels=("team",))


def test_admission_gates_are_copied_when_the_workload_is_made() -> None:
    workload = created(train().annotations({GATE: "example.com/a,example.com/b"}).build())
    assert workload["metadata"]["annotations"] == {GATE: "example.com/a,example.com/b"}
    assert "annotations" not in created(train().annotations({GATE: ""}).build())["metadata"]


def test_a_gate_taken_off_the_job_comes_off_its_workload() -> None:
    gated = train().annotations({GATE: "example.com/a,example.com/b"})
    workload = created(gated.build())
    fewer = gated.annotations({GATE: "example.com/b"}).build()
    action = next_action(fewer, workload, flavors=FLAVORS, priority_classes=CLASSES)
    assert action == PropagateToWorkload(
        {**workload, "metadata": {**workload["metadata"], "annotations": {GATE: "example.com/b"}}},
        ('Updated workload AdmissionGatedBy to "example.com/b"',),
    )
    del fewer["metadata"]["annotations"][GATE]
    action = next_action(fewer, workload, flavors=FLAVORS, priority_classes=CLASSES)
    assert isinstance(action, PropagateToWorkload)
    assert "annotations" not in action.workload["metadata"]
    assert action.messages == ('Updated workload AdmissionGatedBy to ""',)
    assert next_action(fewer, action.workload, flavors=FLAVORS, priority_classes=CLASSES) is None


def test_a_changed_priority_class_reaches_the_pending_workload() -> None:
    low = train().labels({PRIORITY: "low"})
    workload = created(low.build())
    assert workload["spec"]["priority"] == 100
    high = low.labels({PRIORITY: "high"}).build()
    action = next_action(high, workload, flavors=FLAVORS, priority_classes=CLASSES)
    assert isinstance(action, PropagateToWorkload)
    assert action.workload["spec"]["priority"] == 300
    assert action.workload["spec"]["priorityClassRef"] == {
        "group": "kueue.x-k8s.io",
        "kind": "WorkloadPriorityClass",
        "name": "high",
    }
    name = workload["metadata"]["name"]
    assert action.messages == (f"Updated workload priority class: ml/{name}",)
    assert next_action(high, action.workload, flavors=FLAVORS, priority_classes=CLASSES) is None


def test_a_running_workload_follows_a_class_change_too() -> None:
    low = train().labels({PRIORITY: "low"})
    workload = admit(created(low.build()))
    high = low.labels({PRIORITY: "high"}).suspend(False).build()
    action = next_action(high, workload, flavors=FLAVORS, priority_classes=CLASSES)
    assert isinstance(action, PropagateToWorkload) and action.workload["spec"]["priority"] == 300


def test_a_class_not_known_yet_leaves_the_workload_as_it_is() -> None:
    low = train().labels({PRIORITY: "low"})
    workload = created(low.build())
    unknown = low.labels({PRIORITY: "nobody-made-it"}).build()
    assert next_action(unknown, workload, flavors=FLAVORS, priority_classes=CLASSES) is None


def test_workloads_that_do_not_follow_the_label_are_left_alone() -> None:
    by_pod_class = created(train().priority_class_name("pod-high").build())
    labelled = train().priority_class_name("pod-high").labels({PRIORITY: "high"}).build()
    assert next_action(labelled, by_pod_class, flavors=FLAVORS, priority_classes=CLASSES) is None
    reserved_without_class = admit(created(train().build()))
    labelled = train().labels({PRIORITY: "high"}).suspend(False).build()
    assert (
        next_action(labelled, reserved_without_class, flavors=FLAVORS, priority_classes=CLASSES)
        is None
    ), "a Workload holding quota can no longer be given a class"


def test_a_pending_workload_without_class_gets_the_one_added_while_suspended() -> None:
    workload = created(train().build())
    labelled = train().labels({PRIORITY: "low"}).build()
    action = next_action(labelled, workload, flavors=FLAVORS, priority_classes=CLASSES)
    assert isinstance(action, PropagateToWorkload) and action.workload["spec"]["priority"] == 100
