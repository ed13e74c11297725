"""scheduler.api.objects: every question about a raw object, well-formed or not.

(This file sits at the top of ``tests/`` because ``tests/api`` belongs to
the API layer's own suites; ``objects`` is the boundary every process reads
raw JSON through.)
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from scheduler.api import objects
from tests.builders import workload

JOB_OWNER = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "job-uid"}

# Inputs a watch, a YAML file or a hostile AdmissionReview may deliver.
MALFORMED: list[dict[str, Any]] = [
    {},
    {"metadata": None},
    {"metadata": "a string"},
    {"metadata": ["a", "list"]},
    {"metadata": {"name": 7, "namespace": ["x"], "uid": None, "labels": "x=y"}},
    {"metadata": {"labels": None, "annotations": 3, "ownerReferences": "Job"}},
    {"status": None, "spec": []},
    {"status": {"conditions": "True", "admission": []}},
    {"status": {"conditions": [None, 1, "x", {"type": 5}]}},
]


BARE: dict[str, Any] = {"reason": None, "message": None, "at": None}  # type and status only
SPOT = {"name": "main", "flavors": {"cpu": "spot"}, "count": 2}


def bare() -> workload:
    """Workload ``w`` in ``ns`` as a list returns it, with no condition (and no spec)."""
    return workload("w", "ns").as_written().unset("spec").status(conditions=[])


@pytest.mark.parametrize("raw", MALFORMED)
def test_malformed_objects_read_as_absent_fields_never_as_errors(raw: dict[str, Any]) -> None:
    assert objects.name(raw) == ""
    assert objects.namespace(raw) is None
    assert objects.key(raw) == ""
    assert objects.uid(raw) is None
    assert objects.resource_version(raw) == ""
    assert objects.generation(raw) is None
    assert objects.labels(raw) == {}
    assert objects.annotations(raw) == {}
    assert objects.label(raw, "a") is None and objects.annotation(raw, "a") is None
    assert objects.creation_time(raw) is None
    assert not objects.is_being_deleted(raw)
    assert objects.owner_references(raw) == []
    assert objects.controller_reference(raw) is None
    assert objects.owner_job_uid(raw) is None
    assert objects.queue_name(raw) == ""
    assert objects.condition(raw, "Finished") is None
    assert not objects.is_true(raw, "Finished")
    assert objects.admission(raw) is None
    assert objects.admitted_cluster_queue(raw) == ""
    assert objects.pod_set_assignments(raw) == []
    assert objects.workload_queue_name(raw) == ""
    assert objects.priority_class_name(raw) == ""
    for predicate in (
        objects.has_quota_reservation,
        objects.is_admitted,
        objects.is_evicting,
        objects.is_finished,
        objects.is_deactivated,
    ):
        assert predicate(raw) is False


def test_metadata_spec_and_status_are_mappings_or_empty() -> None:
    raw = {"metadata": {"name": "a"}, "spec": {"x": 1}, "status": {"y": 2}}
    assert objects.metadata(raw) == {"name": "a"}
    assert objects.spec(raw) == {"x": 1}
    assert objects.status(raw) == {"y": 2}
    assert objects.metadata({"metadata": None}) == {}
    assert objects.spec({"spec": "x"}) == {}
    assert objects.status({}) == {}


def test_key_is_namespace_slash_name_or_the_name_of_a_cluster_scoped_object() -> None:
    assert objects.key({"metadata": {"name": "w", "namespace": "ns"}}) == "ns/w"
    assert objects.key({"metadata": {"name": "cq"}}) == "cq"
    assert objects.key({"metadata": {"name": "cq", "namespace": ""}}) == "cq"


def test_identity_fields() -> None:
    raw = {
        "metadata": {
            "name": "w",
            "namespace": "ns",
            "uid": "u-1",
            "resourceVersion": "42",
            "generation": 3,
            "deletionTimestamp": "2026-01-01T00:00:00Z",
        }
    }
    assert (objects.name(raw), objects.namespace(raw), objects.uid(raw)) == ("w", "ns", "u-1")
    assert objects.resource_version(raw) == "42"
    assert objects.generation(raw) == 3
    assert objects.is_being_deleted(raw)
    assert objects.generation({"metadata": {"generation": True}}) is None, "a bool is no integer"
    assert objects.generation({"metadata": {"generation": "3"}}) is None


def test_labels_and_annotations_keep_string_entries_only_and_are_copies() -> None:
    raw = {"metadata": {"labels": {"a": "1", "b": 2, "c": None}, "annotations": {"n": "x"}}}
    assert objects.labels(raw) == {"a": "1"}
    assert objects.annotations(raw) == {"n": "x"}
    objects.labels(raw)["z"] = "changed"
    assert "z" not in raw["metadata"]["labels"]


def test_one_label_or_annotation_is_read_when_it_is_a_string() -> None:
    raw = {"metadata": {"labels": {"a": "1", "b": 2}, "annotations": {"n": "x"}}}
    assert objects.label(raw, "a") == "1"
    assert objects.label(raw, "b") is None
    assert objects.label(raw, "missing") is None
    assert objects.annotation(raw, "n") == "x"
    assert objects.annotation({"metadata": None}, "n") is None


def test_times_parse_rfc3339_and_reject_anything_else() -> None:
    assert objects.parse_time("2026-11-22T12:00:00Z") == datetime(2026, 11, 22, 12, tzinfo=UTC)
    assert objects.parse_time("2026-11-22T13:00:00+01:00") == datetime(
        2026, 11, 22, 13, tzinfo=timezone(timedelta(hours=1))
    )
    assert objects.parse_time("2026-11-22T12:00:00") == datetime(2026, 11, 22, 12, tzinfo=UTC)
    for bad in (None, "", "yesterday", 1700000000, ["2026-11-22T12:00:00Z"]):
        assert objects.parse_time(bad) is None
    raw = {"metadata": {"creationTimestamp": "2026-11-22T12:00:00Z"}}
    assert objects.creation_time(raw) == datetime(2026, 11, 22, 12, tzinfo=UTC)


def test_api_group_of_an_api_version() -> None:
    assert objects.api_group("batch/v1") == "batch"
    assert objects.api_group("kueue.x-k8s.io/v1beta2") == "kueue.x-k8s.io"
    assert objects.api_group("v1") == ""
    assert objects.api_group("") is None
    assert objects.api_group(None) is None


def test_owner_references_skip_malformed_entries_and_find_the_controller() -> None:
    controller = {**JOB_OWNER, "controller": True}
    raw = {"metadata": {"ownerReferences": [None, "x", {"kind": "Pod"}, controller]}}
    assert objects.owner_references(raw) == [{"kind": "Pod"}, controller]
    assert objects.controller_reference(raw) == controller
    no_controller = {"metadata": {"ownerReferences": [{**JOB_OWNER, "controller": "yes"}]}}
    assert objects.controller_reference(no_controller) is None


def test_the_owning_job_is_a_batch_owner_reference_else_the_job_uid_label() -> None:
    owned = {
        "metadata": {"ownerReferences": [JOB_OWNER], "labels": {"kueue.x-k8s.io/job-uid": "l"}}
    }
    assert objects.owner_job_uid(owned) == "job-uid", "the owner reference wins over the label"
    labelled = {"metadata": {"labels": {"kueue.x-k8s.io/job-uid": "from-label"}}}
    assert objects.owner_job_uid(labelled) == "from-label"
    other_group = {"metadata": {"ownerReferences": [{**JOB_OWNER, "apiVersion": "example.com/v1"}]}}
    assert objects.owner_job_uid(other_group) is None, "a Job of another group is not a batch Job"
    no_uid = {"metadata": {"ownerReferences": [{**JOB_OWNER, "uid": None}]}}
    assert objects.owner_job_uid(no_uid) is None, "never the string 'None'"
    empty_label = {"metadata": {"labels": {"kueue.x-k8s.io/job-uid": ""}}}
    assert objects.owner_job_uid(empty_label) is None
    assert objects.owner_uid(owned, kind="Job", group="batch") == "job-uid"
    assert objects.owner_uid(owned, kind="JobSet", group="jobset.x-k8s.io") is None


def test_queue_name_is_the_label_else_the_legacy_annotation() -> None:
    key = "kueue.x-k8s.io/queue-name"
    both = {"metadata": {"labels": {key: "from-label"}, "annotations": {key: "from-annotation"}}}
    assert objects.queue_name(both) == "from-label"
    empty_label = {"metadata": {"labels": {key: ""}, "annotations": {key: "legacy"}}}
    assert objects.queue_name(empty_label) == "legacy"
    assert objects.queue_name({"metadata": {"annotations": {key: "legacy"}}}) == "legacy"
    assert objects.queue_name({"metadata": {"labels": {key: 3}}}) == ""


def test_conditions_are_found_by_type_and_only_true_is_true() -> None:
    raw = (
        bare()
        .condition("Finished", "True", **BARE)
        .condition("Evicted", "False", **BARE)
        .condition("Odd", "true", **BARE)
        .admission("cq", SPOT)
        .listed()
    )
    assert objects.condition(raw, "Finished") == {"type": "Finished", "status": "True"}
    assert objects.is_true(raw, "Finished")
    assert not objects.is_true(raw, "Evicted")
    assert not objects.is_true(raw, "Odd"), "the API spells it True"
    assert objects.condition(raw, "Admitted") is None
    listed = objects.conditions(raw)
    assert objects.find_condition(listed, "Evicted") == {"type": "Evicted", "status": "False"}
    assert objects.find_condition([None, {"type": "X"}], "X") == {"type": "X"}  # type: ignore[list-item]


def test_admission_record_reads() -> None:
    raw = bare().condition("QuotaReserved", "True", **BARE).admission("cq", SPOT).listed()
    assert objects.admitted_cluster_queue(raw) == "cq"
    assert objects.pod_set_assignments(raw) == [
        {"name": "main", "flavors": {"cpu": "spot"}, "count": 2}
    ]
    assert objects.admission(bare().listed()) is None
    assert objects.admission({"status": {"admission": {}}}) is None, "an empty record is none"
    assert objects.pod_set_assignments({"status": {"admission": {"podSetAssignments": 3}}}) == []
    assert objects.workload_queue_name({"spec": {"queueName": "lq"}}) == "lq"
    ref = {"spec": {"priorityClassRef": {"kind": "PriorityClass", "name": "high"}}}
    assert objects.priority_class_name(ref) == "high"
    assert objects.priority_class_name({"spec": {"priorityClassRef": "high"}}) == ""


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        (
            bare()
            .condition("QuotaReserved", "True", **BARE)
            .condition("Admitted", "True", **BARE)
            .admission("cq", SPOT)
            .listed(),
            "reserved+admitted",
        ),
        (
            bare().condition("QuotaReserved", "True", **BARE).admission("cq", SPOT).listed(),
            "reserved",
        ),
        (bare().condition("QuotaReserved", "True", **BARE).listed(), "-"),
        (bare().condition("QuotaReserved", "False", **BARE).admission("cq", SPOT).listed(), "-"),
        (bare().condition("Admitted", "True", **BARE).listed(), "admitted"),
        (
            bare()
            .condition("QuotaReserved", "True", **BARE)
            .condition("Evicted", "True", **BARE)
            .admission("cq", SPOT)
            .listed(),
            "reserved+evicting",
        ),
        (bare().condition("Evicted", "True", **BARE).listed(), "-"),
        (bare().condition("Finished", "True", **BARE).listed(), "finished"),
        (bare().spec(active=False).listed(), "deactivated"),
        (bare().spec(active="false").listed(), "-"),
    ],
)
def test_workload_state_predicates(raw: dict[str, Any], want: str) -> None:
    states = [
        name
        for name, holds in (
            ("reserved", objects.has_quota_reservation(raw)),
            ("admitted", objects.is_admitted(raw)),
            ("evicting", objects.is_evicting(raw)),
            ("finished", objects.is_finished(raw)),
            ("deactivated", objects.is_deactivated(raw)),
        )
        if holds
    ]
    assert ("+".join(states) or "-") == want
