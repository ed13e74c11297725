"""Validation and defaulting never raise, whatever the input looks like.

See docs/validation.md#order-of-processing.

Two generators: arbitrary JSON-like values, and "almost right" objects built
by mutating valid objects of every kind at random paths, which reach deep
into the rules instead of stopping at the top-level type check.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.api.defaults import apply_create_defaults, apply_schema_defaults
from scheduler.api.field import FieldError
from scheduler.api.validation import VALIDATORS, admission_status, validate_workload_status
from scheduler.jobs import frameworks as _registry_filled  # noqa: F401 - the job kinds' rules
from tests.builders import (
    admission_check,
    cluster_queue,
    cohort,
    configuration,
    container,
    flavor_quotas,
    job,
    leader_worker_set,
    local_queue,
    multikueue_cluster,
    multikueue_config,
    pod_set,
    ray_cluster,
    ray_job,
    ray_service,
    resource_flavor,
    topology,
    workload,
    workload_priority_class,
)

WHEN = "2025-01-01T00:00:00Z"  # every condition's time

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "-1",
            "1n",
            "ten",
            "cpu",
            "main",
            "True",
            "Never",
            "kubernetes.io/hostname",
            "QuotaReserved",
        ]
    ),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.sampled_from(["spec", "name", "metadata", "count", "status", "resources", "x"])
            | st.text(max_size=6),
            children,
            max_size=4,
        ),
    ),
    max_leaves=20,
)

VALID_OBJECTS = [
    cluster_queue()
    .cohort("c")
    .resource_group(flavor_quotas("a", cpu="1", memory="1Gi"))
    .admission_checks({"name": "ac", "onFlavors": ["a"]})
    .build(),
    resource_flavor("rf")
    .node_labels({"a": "b"})
    .spec(nodeTaints=[{"key": "k", "effect": "NoSchedule"}])
    .spec(tolerations=[{"key": "k", "operator": "Exists"}])
    .build(),
    local_queue("lq").cluster_queue("cq").spec(fair_sharing={"weight": "1"}).build(),
    cohort("co").parent("p").resource_group(flavor_quotas("a", cpu="1")).build(),
    workload("wl")
    .as_written()
    .queue("lq")
    .pod_sets(pod_set(None, 2, cpu="1"))
    .reserve_quota("cq", flavor="alpha", at=WHEN, message="")
    .build(),
    workload_priority_class("high", 100).build(),
    admission_check("ac", "kueue.x-k8s.io/multikueue").build(),
    multikueue_config("mk", "w1").build(),
    multikueue_cluster("w1").kubeconfig_secret("worker-secret", location_type=None).build(),
    topology("t", "zone", "kubernetes.io/hostname").build(),
    job("j")
    .labels()
    .parallelism(None)
    .completions(None)
    .containers(container())
    .queue("q")
    .build(),
    configuration().build(),
    # The framework kinds (registered by scheduler.jobs, imported for them here).
    leader_worker_set("l").queue("q").leader_template().ready_replicas(1).build(),
    ray_job("rj").queue("q").worker_group("w", replicas=2).build(),
    ray_cluster("rc").queue("q").worker_group("w").build(),
    ray_service("rs").queue("q").worker_group("w").build(),
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            found += _paths(item, prefix + (position,))
    return found


@st.composite
def mutated_objects(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    original = draw(st.sampled_from(VALID_OBJECTS))
    obj = copy.deepcopy(original)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [
            path for path in _paths(obj) if path and path[:1] not in (("apiVersion",), ("kind",))
        ]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = obj
        for part in path[:-1]:
            parent = parent[part]
        parent[path[-1]] = draw(json_values)
    return original, obj


def _assert_errors(result: object) -> None:
    assert isinstance(result, list)
    assert all(isinstance(item, FieldError) for item in result)


@settings(max_examples=300, deadline=None)
@given(obj=json_values, old=json_values, key=st.sampled_from(sorted(VALIDATORS)))
def test_arbitrary_values_never_raise(obj: Any, old: Any, key: tuple[str, str]) -> None:
    validator = VALIDATORS[key]
    _assert_errors(validator(obj, None))
    _assert_errors(validator(obj, old))
    if isinstance(obj, dict):
        _assert_errors(validator({**obj, "apiVersion": key[0], "kind": key[1]}, old))


@settings(max_examples=400, deadline=None)
@given(pair=mutated_objects())
def test_mutated_valid_objects_never_raise(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    original, obj = pair
    validator = VALIDATORS[(original["apiVersion"], original["kind"])]
    _assert_errors(validator(obj, None))
    _assert_errors(validator(obj, original))
    _assert_errors(validator(original, obj))
    admission_status(validator(obj, None))
    if original["kind"] == "Workload":
        _assert_errors(validate_workload_status(obj, original))


@settings(max_examples=300, deadline=None)
@given(pair=mutated_objects(), partial=st.booleans())
def test_defaulting_never_raises_and_is_idempotent(
    pair: tuple[dict[str, Any], dict[str, Any]], partial: bool
) -> None:
    _, obj = pair
    once = apply_schema_defaults(obj)
    assert apply_schema_defaults(once) == once
    created = apply_create_defaults(once, partial_admission=partial)
    assert apply_create_defaults(created, partial_admission=partial) == created


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_defaulting_arbitrary_values(value: Any) -> None:
    apply_schema_defaults(
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "spec": value}
    )
    apply_schema_defaults(
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "spec": value, "status": value}
    )
    apply_create_defaults({"kind": "ClusterQueue", "metadata": value})
    apply_create_defaults({"kind": "Workload", "spec": value}, partial_admission=False)
