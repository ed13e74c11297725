"""The conversion webhook's fast path (:func:`scheduler.api.convert.convert_owned`)
answers what the copying conversion answers, for every seed example and every
pair of versions the webhook converts between."""

from __future__ import annotations

import copy

import pytest

from scheduler.api.convert import ConversionError, convert_owned, convert_with_warnings
from tests.api.seed_examples import documents
from tests.builders.workload import pod_set, workload

KUEUE = "kueue.x-k8s.io/"
OBJECTS = [doc.raw for doc in documents() if doc.api_version.startswith(KUEUE)] + [
    workload("admitted")
    .queue("lq")
    .priority_class("high")
    .priority(10)
    .pod_set(count=2, cpu="1")
    .reserve_quota("cq", flavor="spot")
    .admitted()
    .build(),
    workload("two").pod_sets(pod_set("a", 2, cpu="500m").min_count(1), pod_set("b", 1)).build(),
]
TARGETS = ["v1beta2", "v1beta1"]


def copying(obj: dict[str, object], target: str) -> object:
    try:
        return convert_with_warnings(obj, KUEUE + target, check=False).object
    except ConversionError as failed:
        return ("refused", str(failed))


def owned(obj: dict[str, object], target: str) -> object:
    try:
        return convert_owned(copy.deepcopy(obj), KUEUE + target)
    except ConversionError as failed:
        return ("refused", str(failed))


@pytest.mark.parametrize("target", TARGETS)
def test_the_fast_path_answers_as_the_copying_conversion(target: str) -> None:
    checked = 0
    for obj in OBJECTS:
        assert owned(obj, target) == copying(obj, target), obj["metadata"]
        hub = copying(obj, "v1beta2")
        if isinstance(hub, dict):
            # And from the hub (what the API server stores) to the target, and back.
            assert owned(hub, target) == copying(hub, target), obj["metadata"]
            there = copying(hub, target)
            assert isinstance(there, dict)
            assert owned(there, "v1beta2") == copying(there, "v1beta2"), obj["metadata"]
            checked += 1
    assert checked > 10


def test_an_object_already_in_the_desired_version_is_the_answer_itself() -> None:
    obj = workload("w").pod_set(cpu="1").build()
    assert convert_owned(obj, KUEUE + "v1beta2") is obj
