"""The topology annotations a Job or JobSet may carry (docs/validation.md#topology-annotations)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.jobs.batchjob.validation import validate_job
from scheduler.jobs.jobset.validation import validate_jobset
from tests.builders import job, jobset

REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE = "kueue.x-k8s.io/podset-slice-required-topology"
SIZE = "kueue.x-k8s.io/podset-slice-size"
LAYERS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
GROUP = "kueue.x-k8s.io/podset-group-name"
AT = "spec.template.metadata.annotations"


def errors_of(annotations: dict[str, str], parallelism: int = 4) -> list[tuple[str, str, str]]:
    queued = job("j").queue("lq").build()
    queued["spec"]["parallelism"] = queued["spec"]["completions"] = parallelism
    queued["spec"]["template"].setdefault("metadata", {})["annotations"] = annotations
    return [(e.rule or "", e.field, e.message) for e in validate_job(queued)]


GOOD = [
    {REQUIRED: "cloud.provider.com/rack"},
    {PREFERRED: "cloud.provider.com/block"},
    {UNCONSTRAINED: "true"},
    {REQUIRED: "rack", SLICE: "kubernetes.io/hostname", SIZE: "2"},
    {LAYERS: '[{"topology": "block", "size": 4}, {"topology": "rack", "size": 2}]'},
]


@pytest.mark.parametrize("annotations", GOOD)
def test_what_kueue_accepts_is_accepted(annotations: dict[str, str]) -> None:
    assert errors_of(annotations) == []


BAD: list[tuple[dict[str, str], str, str, str]] = [
    (
        {REQUIRED: "rack", PREFERRED: "block"},
        "TAS-1",
        AT,
        "must not contain more than one topology annotation",
    ),
    ({REQUIRED: "not a label!"}, "TAS-2", f"{AT}[{REQUIRED}]", "is not a valid label name"),
    ({PREFERRED: "rack", GROUP: "7"}, "TAS-3", f"{AT}[{GROUP}]", "must not be a number"),
    ({GROUP: "g"}, "TAS-3", f"{AT}[{GROUP}]", "may not be set when neither"),
    ({UNCONSTRAINED: "yes"}, "TAS-4", f"{AT}[{UNCONSTRAINED}]", "must be a boolean value"),
    ({SLICE: "rack", SIZE: "two"}, "TAS-5", f"{AT}[{SIZE}]", "must be a numeric value"),
    ({SLICE: "rack", SIZE: "0"}, "TAS-5", f"{AT}[{SIZE}]", "must be greater than or equal to 1"),
    (
        {SLICE: "rack", SIZE: "8"},
        "TAS-5",
        f"{AT}[{SIZE}]",
        "must not be greater than pod set count 4",
    ),
    ({SLICE: "rack"}, "TAS-6", f"{AT}[{SIZE}]", "must be set when"),
    ({SIZE: "2"}, "TAS-6", f"{AT}[{SIZE}]", "may not be set when"),
    ({LAYERS: "not json"}, "TAS-7", f"{AT}[{LAYERS}]", "must be a valid JSON array"),
    (
        {LAYERS: '[{"topology": "block", "size": 4}, {"topology": "rack", "size": 3}]'},
        "TAS-7",
        f"{AT}[{LAYERS}][1].size",
        "must evenly divide the parent layer size 4",
    ),
]


@pytest.mark.parametrize(("annotations", "rule", "field", "message"), BAD)
def test_what_kueue_refuses_is_refused_naming_the_annotation(
    annotations: dict[str, str], rule: str, field: str, message: str
) -> None:
    found = errors_of(annotations)
    assert any(r == rule and f == field and message in m for r, f, m in found), found


def _replicated(name: str, replicas: int, annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "spec": {
                "parallelism": 1,
                "template": {
                    "metadata": {"annotations": annotations},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                },
            }
        },
    }


def test_jobset_groups_pair_a_single_leader_with_its_workers_at_one_level() -> None:
    good = jobset("js").queue("lq").build()
    good["spec"]["replicatedJobs"] = [
        _replicated("leader", 1, {REQUIRED: "rack", GROUP: "g"}),
        _replicated("workers", 4, {REQUIRED: "rack", GROUP: "g"}),
    ]
    assert validate_jobset(good) == []
    bad = jobset("js").queue("lq").build()
    bad["spec"]["replicatedJobs"] = [
        _replicated("a", 2, {REQUIRED: "rack", GROUP: "g"}),
        _replicated("b", 4, {PREFERRED: "rack", GROUP: "g"}),
        _replicated("c", 1, {REQUIRED: "rack", GROUP: "h"}),
    ]
    messages = [e.message for e in validate_jobset(bad) if e.rule == "TAS-8"]
    assert any("at least one pod set has only 1 replica" in m for m in messages)
    assert any("consistent with" in m for m in messages)
    assert any("exactly 2 pod sets, got: 1" in m for m in messages)
