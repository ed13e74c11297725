"""LimitRange defaults and RuntimeClass overhead in a Workload's requests, as Kueue's
``workload.AdjustResources`` adds them (docs/scheduling.md#workload-usage)."""

from __future__ import annotations

from typing import Any

from scheduler.api.models import Workload
from scheduler.api.parse import parse_object
from scheduler.api.pod_overhead import (
    LimitDefaults,
    adjusted_workload,
    limit_range_defaults,
    runtime_class_overhead,
    summarize,
)
from scheduler.api.quantity import Quantity
from tests.builders import container, limit_range, pod_set, runtime_class, workload


def requests_of(raw: Any) -> dict[str, str]:
    parsed = parse_object(raw)
    assert isinstance(parsed, Workload)
    return {str(k): str(v) for k, v in parsed.spec.pod_sets[0].requests.items()}


CONTAINER_DEFAULTS = (
    limit_range("defaults")
    .item("Container", default={"cpu": "2", "memory": "1Gi"}, defaultRequest={"cpu": "1"})
    .item("PersistentVolumeClaim", default={"storage": "1Gi"})
    .build()
)


def test_a_limit_range_keeps_the_defaults_of_container_and_pod_items_only() -> None:
    assert limit_range_defaults(CONTAINER_DEFAULTS) == {
        "Container": LimitDefaults({"cpu": "2", "memory": "1Gi"}, {"cpu": "1"})
    }
    bounds_only = limit_range("bounds").item("Container", max={"cpu": "4"}).build()
    assert limit_range_defaults(bounds_only) == {}


def test_several_limit_ranges_keep_the_first_value_of_each_resource() -> None:
    first = limit_range_defaults(CONTAINER_DEFAULTS)
    second = limit_range_defaults(
        limit_range("more").item("Container", default={"cpu": "8", "nvidia.com/gpu": "1"}).build()
    )
    assert summarize([first, second])["Container"].default == {
        "cpu": "2",
        "memory": "1Gi",
        "nvidia.com/gpu": "1",
    }


def test_containers_without_requests_are_charged_the_defaults() -> None:
    bare = workload("w").pod_sets(pod_set("main", 2).containers(container(resources=False)))
    bare = bare.build()
    summary = summarize([limit_range_defaults(CONTAINER_DEFAULTS)])
    adjusted = adjusted_workload(bare, summary, {})
    # cpu from defaultRequest; memory from the default limit, standing in for its request
    assert requests_of(adjusted) == {"cpu": "1", "memory": "1Gi"}
    assert "resources" not in bare["spec"]["podSets"][0]["template"]["spec"]["containers"][0], (
        "the Workload itself is left as it is"
    )


def test_what_a_container_sets_itself_wins() -> None:
    own = workload("w").pod_set(count=1, requests={"cpu": "3"}).build()
    summary = summarize([limit_range_defaults(CONTAINER_DEFAULTS)])
    assert requests_of(adjusted_workload(own, summary, {})) == {"cpu": "3", "memory": "1Gi"}


def test_init_containers_get_the_defaults_too() -> None:
    with_init = pod_set("main").requests(cpu="500m").init_containers(container(resources=False))
    raw = workload("w").pod_sets(with_init).build()
    defaults = limit_range("d").item("Container", defaultRequest={"cpu": "2"}, default={"cpu": "2"})
    summary = summarize([limit_range_defaults(defaults.build())])
    assert requests_of(adjusted_workload(raw, summary, {}))["cpu"] == "2", "the init phase peaks"


def test_pod_level_resources_get_the_pod_defaults_only_when_present() -> None:
    pod_range = limit_range("pod").item("Pod", defaultRequest={"memory": "2Gi"}).build()
    defaults = summarize([limit_range_defaults(pod_range)])
    plain = workload("w").pod_set(count=1, requests={"cpu": "1"}).build()
    assert requests_of(adjusted_workload(plain, defaults, {})) == {"cpu": "1"}
    pod_level = workload("w").pod_sets(
        pod_set("main").requests(cpu="1").pod_spec(resources={"requests": {"cpu": "1"}})
    )
    assert requests_of(adjusted_workload(pod_level.build(), defaults, {})) == {
        "cpu": "1",
        "memory": "2Gi",
    }


def test_the_runtime_class_overhead_is_added_unless_the_template_has_one() -> None:
    kata = runtime_class("kata", "kata").overhead(cpu="250m", memory="120Mi").build()
    overheads = {"kata": runtime_class_overhead(kata)}
    sandboxed = pod_set("main").requests(cpu="1").pod_spec(runtimeClassName="kata")
    raw = workload("w").pod_sets(sandboxed).build()
    assert requests_of(adjusted_workload(raw, {}, overheads)) == {"cpu": "1250m", "memory": "120Mi"}
    own = workload("w").pod_sets(sandboxed.pod_spec(overhead={"cpu": "10m"})).build()
    assert requests_of(adjusted_workload(own, {}, overheads)) == {"cpu": "1010m"}
    assert runtime_class_overhead(runtime_class("runc").build()) == {}


def test_nothing_to_add_gives_the_same_object() -> None:
    raw = workload("w").pod_set(count=1, requests={"cpu": "1"}).build()
    assert adjusted_workload(raw, {}, {"kata": {"cpu": "1"}}) is raw
    assert Quantity.parse("1250m") == Quantity.parse("1.25")
