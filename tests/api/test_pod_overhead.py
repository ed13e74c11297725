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
from tests.builders import workload


def limit_range(*items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "spec": {"limits": list(items)}}


def requests_of(raw: Any) -> dict[str, str]:
    parsed = parse_object(raw)
    assert isinstance(parsed, Workload)
    return {str(k): str(v) for k, v in parsed.spec.pod_sets[0].requests.items()}


CONTAINER_DEFAULTS = limit_range(
    {"type": "Container", "default": {"cpu": "2", "memory": "1Gi"}, "defaultRequest": {"cpu": "1"}},
    {"type": "PersistentVolumeClaim", "default": {"storage": "1Gi"}},
)


def test_a_limit_range_keeps_the_defaults_of_container_and_pod_items_only() -> None:
    assert limit_range_defaults(CONTAINER_DEFAULTS) == {
        "Container": LimitDefaults({"cpu": "2", "memory": "1Gi"}, {"cpu": "1"})
    }
    assert limit_range_defaults(limit_range({"type": "Container", "max": {"cpu": "4"}})) == {}


def test_several_limit_ranges_keep_the_first_value_of_each_resource() -> None:
    first = limit_range_defaults(CONTAINER_DEFAULTS)
    second = limit_range_defaults(
        limit_range({"type": "Container", "default": {"cpu": "8", "nvidia.com/gpu": "1"}})
    )
    assert summarize([first, second])["Container"].default == {
        "cpu": "2",
        "memory": "1Gi",
        "nvidia.com/gpu": "1",
    }


def test_containers_without_requests_are_charged_the_defaults() -> None:
    bare = workload("w").pod_set(count=2).build()
    bare["spec"]["podSets"][0]["template"]["spec"]["containers"][0].pop("resources", None)
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
    raw = workload("w").pod_set(count=1, requests={"cpu": "500m"}).build()
    spec = raw["spec"]["podSets"][0]["template"]["spec"]
    spec["initContainers"] = [{"name": "init", "image": "i"}]
    defaults = limit_range(
        {"type": "Container", "defaultRequest": {"cpu": "2"}, "default": {"cpu": "2"}}
    )
    summary = summarize([limit_range_defaults(defaults)])
    assert requests_of(adjusted_workload(raw, summary, {}))["cpu"] == "2", "the init phase peaks"


def test_pod_level_resources_get_the_pod_defaults_only_when_present() -> None:
    defaults = summarize(
        [limit_range_defaults(limit_range({"type": "Pod", "defaultRequest": {"memory": "2Gi"}}))]
    )
    plain = workload("w").pod_set(count=1, requests={"cpu": "1"}).build()
    assert requests_of(adjusted_workload(plain, defaults, {})) == {"cpu": "1"}
    pod_level = workload("w").pod_set(count=1, requests={"cpu": "1"}).build()
    pod_level["spec"]["podSets"][0]["template"]["spec"]["resources"] = {"requests": {"cpu": "1"}}
    assert requests_of(adjusted_workload(pod_level, defaults, {})) == {"cpu": "1", "memory": "2Gi"}


def test_the_runtime_class_overhead_is_added_unless_the_template_has_one() -> None:
    kata = {"overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}}}
    overheads = {"kata": runtime_class_overhead(kata)}
    raw = workload("w").pod_set(count=1, requests={"cpu": "1"}).build()
    raw["spec"]["podSets"][0]["template"]["spec"]["runtimeClassName"] = "kata"
    assert requests_of(adjusted_workload(raw, {}, overheads)) == {"cpu": "1250m", "memory": "120Mi"}
    raw["spec"]["podSets"][0]["template"]["spec"]["overhead"] = {"cpu": "10m"}
    assert requests_of(adjusted_workload(raw, {}, overheads)) == {"cpu": "1010m"}
    assert runtime_class_overhead({"handler": "runc"}) == {}


def test_nothing_to_add_gives_the_same_object() -> None:
    raw = workload("w").pod_set(count=1, requests={"cpu": "1"}).build()
    assert adjusted_workload(raw, {}, {"kata": {"cpu": "1"}}) is raw
    assert Quantity.parse("1250m") == Quantity.parse("1.25")
