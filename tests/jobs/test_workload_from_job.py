"""Job → Workload as docs/concepts.md#from-job-to-workload describes it: name and hash, owner,
labels, the ``main`` pod set and its count, queue name, priority."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.parse import parse_object
from scheduler.api.pipeline import review
from scheduler.jobs import (
    BATCH_JOB,
    JOB_UID_LABEL,
    PodSetInfo,
    PriorityClasses,
    by_framework,
    for_object,
    workload_from_job,
    workload_name,
)
from tests.builders import job


def pi() -> job:
    """Kueue's sample Job ``pi`` in ``team-a`` as created (no ``suspend`` yet): 3 pods of
    2 cpu, queue ``user-queue``."""
    return (
        job("pi", "team-a")
        .uid("6a0d-uid")
        .queue("user-queue")
        .annotations()
        .template_labels()
        .suspend(None)
        .parallelism(3)
        .completions(None)
        .requests(cpu="2")
    )


def test_name_is_job_prefix_and_five_hex_digits_of_the_sha1_of_kind_group_name_uid() -> None:
    expected = hashlib.sha1(b"Job\nbatch\npi\n6a0d-uid").hexdigest()[:5]
    assert workload_from_job(pi().build())["metadata"]["name"] == f"job-pi-{expected}"


def test_long_names_cut_the_prefix_to_247_characters() -> None:
    name = workload_name("x" * 300, "u")
    assert len(name) == 253
    assert name.startswith("job-" + "x" * 243 + "-")


def test_owner_reference_and_uid_label() -> None:
    workload = workload_from_job(pi().build())
    assert workload["metadata"]["namespace"] == "team-a"
    assert workload["metadata"]["labels"] == {JOB_UID_LABEL: "6a0d-uid"}
    assert workload["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": "pi",
            "uid": "6a0d-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def test_count_is_min_of_parallelism_and_completions() -> None:
    assert workload_from_job(pi().completions(2).build())["spec"]["podSets"][0]["count"] == 2
    assert workload_from_job(pi().completions(10).build())["spec"]["podSets"][0]["count"] == 3
    assert workload_from_job(pi().parallelism(4).build())["spec"]["podSets"][0]["count"] == 4
    assert workload_from_job(pi().parallelism(None).build())["spec"]["podSets"][0]["count"] == 1


def test_one_pod_set_named_main_with_the_template_minus_controller_labels() -> None:
    workload = workload_from_job(
        pi()
        .template_labels(
            {
                "controller-uid": "a",
                "batch.kubernetes.io/controller-uid": "b",
                "job-name": "pi",
                "batch.kubernetes.io/job-name": "pi",
                "team": "ml",
            }
        )
        .build()
    )
    (pod_set,) = workload["spec"]["podSets"]
    assert pod_set["name"] == "main"
    assert pod_set["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/job-name": "pi",
        "team": "ml",
    }
    assert pod_set["template"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "2"}}


def test_min_count_from_the_min_parallelism_annotation() -> None:
    workload = workload_from_job(
        pi().annotations({"kueue.x-k8s.io/job-min-parallelism": "1"}).build()
    )
    assert workload["spec"]["podSets"][0]["minCount"] == 1
    assert "minCount" not in workload_from_job(pi().build())["spec"]["podSets"][0]


def test_queue_name_from_label_else_legacy_annotation() -> None:
    assert workload_from_job(pi().build())["spec"]["queueName"] == "user-queue"
    legacy = pi().build()
    del legacy["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    legacy["metadata"]["annotations"] = {"kueue.x-k8s.io/queue-name": "training"}
    assert workload_from_job(legacy)["spec"]["queueName"] == "training"


def test_priority_from_workload_priority_class_label_first() -> None:
    classes = PriorityClasses(
        workload={"high": 1000}, pod={"pod-high": 50}, global_default=("base", 1)
    )
    workload = workload_from_job(
        pi()
        .labels({"kueue.x-k8s.io/priority-class": "high"})
        .priority_class_name("pod-high")
        .build(),
        priority_classes=classes,
    )
    assert workload["spec"]["priority"] == 1000
    assert workload["spec"]["priorityClassRef"] == {
        "group": "kueue.x-k8s.io",
        "kind": "WorkloadPriorityClass",
        "name": "high",
    }


def test_priority_from_pod_priority_class_then_global_default_then_none() -> None:
    classes = PriorityClasses(pod={"pod-high": 50}, global_default=("base", 1))
    from_pod = workload_from_job(
        pi().priority_class_name("pod-high").build(), priority_classes=classes
    )["spec"]
    assert (from_pod["priority"], from_pod["priorityClassRef"]["name"]) == (50, "pod-high")
    default = workload_from_job(pi().build(), priority_classes=classes)["spec"]
    assert (default["priority"], default["priorityClassRef"]) == (
        1,
        {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "base"},
    )
    plain = workload_from_job(pi().build())["spec"]
    assert "priority" not in plain and "priorityClassRef" not in plain


def test_the_workload_is_valid_and_parses() -> None:
    classes = PriorityClasses(workload={"high": 1000})
    raw = workload_from_job(
        pi().labels({"kueue.x-k8s.io/priority-class": "high"}).build(), priority_classes=classes
    )
    assert review(raw).errors == ()
    parsed = parse_object(raw)
    assert parsed.spec.pod_sets[0].count == 3
    assert str(parsed.spec.pod_sets[0].requests["cpu"]) == "2"


def test_registry_finds_the_batch_integration() -> None:
    assert for_object(pi().build()) is BATCH_JOB
    assert by_framework("batch/job") is BATCH_JOB
    assert for_object({"apiVersion": "apps/v1", "kind": "Deployment"}) is None


def test_run_with_unsuspends_and_adds_the_flavor_node_selector() -> None:
    suspended = BATCH_JOB.suspend(pi().build())
    assert BATCH_JOB.is_suspended(suspended)
    started = BATCH_JOB.run_with(suspended, [PodSetInfo("main", 3, {"instance-type": "spot"})])
    assert not BATCH_JOB.is_suspended(started)
    assert started["spec"]["template"]["spec"]["nodeSelector"] == {"instance-type": "spot"}
    assert "nodeSelector" not in suspended["spec"]["template"]["spec"]  # the input is untouched
    partial = BATCH_JOB.run_with(suspended, [PodSetInfo("main", 2)])
    assert partial["spec"]["parallelism"] == 2


def test_run_with_never_overrides_a_node_selector_key_the_user_set() -> None:
    mine = pi().build()
    mine["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a", "instance-type": "spot"}
    started = BATCH_JOB.run_with(
        mine, [PodSetInfo("main", 3, {"instance-type": "ondemand", "disk": "ssd"})]
    )
    assert started["spec"]["template"]["spec"]["nodeSelector"] == {
        "zone": "a",
        "instance-type": "spot",
        "disk": "ssd",
    }


def test_restore_puts_the_recorded_template_and_count_back() -> None:
    original = pi().build()
    pod_sets = workload_from_job(original)["spec"]["podSets"]
    started = BATCH_JOB.run_with(original, [PodSetInfo("main", 2, {"instance-type": "spot"})])
    restored = BATCH_JOB.restore(started, pod_sets)
    assert "nodeSelector" not in restored["spec"]["template"]["spec"]
    assert restored["spec"]["parallelism"] == 3


def test_finished_reads_complete_or_failed_conditions() -> None:
    running = pi().build()
    assert not BATCH_JOB.finished(running).finished
    done = {**running, "status": {"conditions": [{"type": "Complete", "status": "True"}]}}
    assert BATCH_JOB.finished(done).reason == "Succeeded"
    failed = {
        **running,
        "status": {"conditions": [{"type": "Failed", "status": "True", "message": "x"}]},
    }
    assert (BATCH_JOB.finished(failed).reason, BATCH_JOB.finished(failed).message) == (
        "Failed",
        "x",
    )


@settings(max_examples=200, deadline=None)
@given(name=st.from_regex(r"[a-z]([a-z0-9-]{0,300}[a-z0-9])?", fullmatch=True), uid=st.uuids())
def test_names_are_valid_object_names_and_depend_on_the_uid(name: str, uid: object) -> None:
    made = workload_name(name, str(uid))
    assert len(made) <= 253 and made.startswith("job-")
    assert made[-6] == "-" and all(char in "0123456789abcdef" for char in made[-5:])
    assert made[:-6] == f"job-{name}"[:247]
    assert made == workload_name(name, str(uid))


def test_restore_keeps_the_job_controllers_labels_so_the_selector_still_matches() -> None:
    original = pi().build()
    original["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    pod_sets = workload_from_job(original)["spec"]["podSets"]
    live = BATCH_JOB.run_with(
        original,
        [
            PodSetInfo(
                "main", 3, {"instance-type": "spot"}, labels={"kueue.x-k8s.io/podset": "main"}
            )
        ],
    )
    live["spec"]["template"]["metadata"]["labels"].update(
        {
            "batch.kubernetes.io/controller-uid": "u1",
            "controller-uid": "u1",
            "job-name": "j",
            "batch.kubernetes.io/job-name": "j",
        }
    )
    restored = BATCH_JOB.restore(BATCH_JOB.suspend(live), pod_sets)
    assert restored["spec"]["template"]["metadata"]["labels"] == {
        "app": "x",
        "batch.kubernetes.io/controller-uid": "u1",
        "controller-uid": "u1",
        "job-name": "j",
        "batch.kubernetes.io/job-name": "j",
    }
    assert "nodeSelector" not in restored["spec"]["template"]["spec"]
    assert (
        restored["spec"]["template"]["spec"]["containers"]
        == live["spec"]["template"]["spec"]["containers"]
    )


def test_env_variables_named_twice_are_kept_once_with_the_last_value() -> None:
    job = pi().build()
    container = job["spec"]["template"]["spec"]["containers"][0]
    container["env"] = [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "2"},
        {"name": "A", "value": "3"},
    ]
    made = workload_from_job(job)
    env = made["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "A", "value": "3"}, {"name": "B", "value": "2"}]
    assert container["env"][0] == {"name": "A", "value": "1"}, "the job is not changed"
