"""Parsing raw v1beta2 objects: defaults, type errors with paths, never a crash."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.api.field import ParseError
from scheduler.api.models import ClusterQueue, Workload
from scheduler.api.parse import (
    ObjectParseError,
    parse_cluster_queue,
    parse_local_queue,
    parse_multikueue_cluster,
    parse_object,
    parse_workload,
    parse_workload_priority_class,
)
from scheduler.api.quantity import Quantity
from tests.builders import (
    cluster_queue,
    container,
    flavor_quotas,
    pod_set,
    resource_group,
    workload,
)

V1BETA2 = "kueue.x-k8s.io/v1beta2"


def errors_of(raw: object) -> list[tuple[str, str]]:
    with pytest.raises(ParseError) as caught:
        parse_object(raw)
    return [(item.field, item.message) for item in caught.value.errors]


# --- defaults ---------------------------------------------------------------------


def test_cluster_queue_schema_defaults() -> None:
    cq = parse_cluster_queue(cluster_queue().namespace_selector(None).build())
    assert cq.spec.queueing_strategy == "BestEffortFIFO"
    assert cq.spec.stop_policy == "None"
    assert cq.spec.preemption.within_cluster_queue == "Never"
    assert cq.spec.preemption.reclaim_within_cohort == "Never"
    assert cq.spec.preemption.borrow_within_cohort.policy == "Never"
    assert cq.spec.flavor_fungibility.when_can_borrow == "MayStopSearch"
    assert cq.spec.flavor_fungibility.when_can_preempt == "TryNextFlavor"
    assert cq.spec.flavor_fungibility.preference is None
    assert cq.spec.namespace_selector is None  # absent matches nothing
    assert cq.spec.fair_sharing is None
    assert cq.spec.cohort_name is None


def test_empty_enum_strings_mean_default() -> None:
    cq = parse_cluster_queue(
        cluster_queue()
        .namespace_selector(None)
        .spec(queueingStrategy="", stopPolicy="", flavorFungibility={"whenCanBorrow": ""})
        .build()
    )
    assert (cq.spec.queueing_strategy, cq.spec.stop_policy) == ("BestEffortFIFO", "None")
    assert cq.spec.flavor_fungibility.when_can_borrow == "MayStopSearch"


def test_given_values_are_kept() -> None:
    cq = parse_cluster_queue(
        cluster_queue()
        .namespace_selector(None)
        .spec(
            queueingStrategy="StrictFIFO",
            stopPolicy="HoldAndDrain",
            cohortName="team-ab",
            namespaceSelector={"matchLabels": {"team": "a"}},
            fairSharing={},
            resourceGroups=[
                resource_group(
                    flavor_quotas("default").resource(
                        "cpu", "1500m", borrowing_limit=2, lending_limit="0"
                    )
                )
            ],
        )
        .build()
    )
    assert cq.spec.queueing_strategy == "StrictFIFO"
    assert cq.spec.stop_policy == "HoldAndDrain"
    assert cq.spec.cohort_name == "team-ab"
    assert cq.spec.namespace_selector is not None and dict(
        cq.spec.namespace_selector.match_labels
    ) == {"team": "a"}
    assert cq.spec.fair_sharing is not None and cq.spec.fair_sharing.weight == Quantity.parse("1")
    quota = cq.spec.resource_groups[0].flavors[0].resources[0]
    assert str(quota.nominal_quota) == "1500m"
    assert quota.borrowing_limit == Quantity.parse("2")
    assert quota.lending_limit == Quantity.zero()


def test_local_queue_and_multikueue_defaults() -> None:
    lq = parse_local_queue(
        {"apiVersion": V1BETA2, "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ns"}}
    )
    assert lq.spec.stop_policy == "None" and lq.spec.cluster_queue is None
    mkc = parse_multikueue_cluster(
        {
            "kind": "MultiKueueCluster",
            "spec": {"clusterSource": {"kubeConfig": {"location": "secret"}}},
        }
    )
    assert mkc.spec.cluster_source is not None and mkc.spec.cluster_source.kube_config is not None
    assert mkc.spec.cluster_source.kube_config.location_type == "Secret"


def test_workload_defaults_and_requests() -> None:
    wl = parse_workload(
        workload("w", "ns")
        .uid(None)
        .created("2025-03-07T21:19:54Z")
        .queue("lq")
        .pod_sets(
            pod_set(None, None).containers(
                container("c0", image=None, requests={"cpu": "1"}),
                container("c1", image=None, requests={"cpu": "500m", "memory": "1Gi"}),
            )
        )
        .build()
    )
    assert wl.spec.active is True
    assert wl.spec.priority is None
    (only,) = wl.spec.pod_sets
    assert (only.name, only.count) == ("main", 1)
    assert {k: str(v) for k, v in only.requests.items()} == {"cpu": "1500m", "memory": "1Gi"}
    assert wl.key == "ns/w"
    assert (
        wl.metadata.creation_timestamp is not None
        and wl.metadata.creation_timestamp.tzinfo is not None
    )


def test_missing_requests_take_limits_and_init_containers_follow_kubernetes() -> None:
    template = {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "resources": {
                        "limits": {"cpu": "2", "memory": "1Gi"},
                        "requests": {"memory": "512Mi"},
                    },
                }
            ],
            "initContainers": [
                {"name": "setup", "resources": {"requests": {"cpu": "3"}}},
                {
                    "name": "sidecar",
                    "restartPolicy": "Always",
                    "resources": {"requests": {"cpu": "500m"}},
                },
            ],
            "overhead": {"cpu": "100m"},
            "nodeSelector": {"instance-type": "spot"},
            "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["a"]}
                                ]
                            }
                        ]
                    }
                }
            },
        }
    }
    wl = parse_workload(
        workload("w", "ns")
        .uid(None)
        .created("2025-03-07T21:19:54Z")
        .spec(podSets=[{"name": "driver", "count": 4, "template": template}])
        .build()
    )
    pod_set = wl.spec.pod_sets[0]
    # steady: 2 (main, from limit) + 0.5 (sidecar) = 2.5; init peak: 3; plus 100m overhead
    assert str(pod_set.requests["cpu"]) == "3100m"
    assert str(pod_set.requests["memory"]) == "512Mi"
    assert pod_set.template is not None
    assert dict(pod_set.template.node_selector) == {"instance-type": "spot"}
    assert pod_set.template.tolerations[0].operator == "Exists"
    terms = pod_set.template.required_node_affinity
    assert terms is not None and terms[0].match_expressions[0].values == ("a",)
    assert pod_set.template.raw["spec"]["overhead"] == {"cpu": "100m"}


def test_admitted_workload_status() -> None:
    raw = (
        workload("w", "ns")
        .uid(None)
        .created("2025-03-07T21:19:54Z")
        .pod_sets(pod_set(None, 2).containers(container("c0", image=None, requests={"cpu": "1"})))
        .build()
    )
    raw["status"] = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {"flavors": {"cpu": "spot"}, "resourceUsage": {"cpu": "2"}, "count": 2}
            ],
        },
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "",
                "lastTransitionTime": "2025-03-07T21:19:54Z",
            }
        ],
        "requeueState": {"count": 1, "requeueAt": "2025-03-07T21:29:54+01:00"},
    }
    wl = parse_workload(raw)
    assert wl.status.admission is not None
    assignment = wl.status.admission.pod_set_assignments[0]
    assert (assignment.name, dict(assignment.flavors), assignment.count) == (
        "main",
        {"cpu": "spot"},
        2,
    )
    assert assignment.resource_usage["cpu"] == Quantity.parse("2")
    assert wl.status.is_condition_true("QuotaReserved")
    assert wl.status.requeue_state is not None and wl.status.requeue_state.count == 1


def test_workload_priority_class() -> None:
    wpc = parse_workload_priority_class(
        {"kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 1000}
    )
    assert wpc.value == 1000


# --- errors ---------------------------------------------------------------------------


def test_bad_quantity_is_reported_with_its_full_path() -> None:
    raw = (
        cluster_queue()
        .namespace_selector(None)
        .spec(resourceGroups=[resource_group(flavor_quotas("default").resource("cpu", "abc"))])
        .build()
    )
    assert errors_of(raw) == [
        (
            "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
            '"abc" is not a valid quantity (examples: 9, 500m, 36Gi)',
        )
    ]


def test_every_error_is_collected() -> None:
    raw = (
        cluster_queue()
        .namespace_selector(None)
        .spec(
            queueingStrategy=3,
            cohortName=["a"],
            resourceGroups=[
                {
                    "coveredResources": ["cpu", 5],
                    "flavors": [
                        {"name": "a", "resources": [{"name": "cpu", "nominalQuota": "ten"}]},
                        "x",
                    ],
                }
            ],
            preemption={"borrowWithinCohort": {"maxPriorityThreshold": "high"}},
        )
        .build()
    )
    fields = [field for field, _ in errors_of(raw)]
    assert fields == [
        "spec.resourceGroups[0].coveredResources[1]",
        "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
        "spec.resourceGroups[0].flavors[1]",
        "spec.cohortName",
        "spec.queueingStrategy",
        "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
    ]


def test_type_error_messages() -> None:
    found = dict(
        errors_of(
            cluster_queue()
            .namespace_selector(None)
            .spec(
                queueingStrategy=3,
                preemption={"borrowWithinCohort": {"maxPriorityThreshold": 2**40}},
            )
            .build()
        )
    )
    assert found["spec.queueingStrategy"] == "must be a string, not an integer"
    assert found["spec.preemption.borrowWithinCohort.maxPriorityThreshold"].startswith(
        "must be a 32-bit integer"
    )


def test_map_keys_are_rendered_in_brackets() -> None:
    raw = (
        workload("w", "ns")
        .uid(None)
        .created("2025-03-07T21:19:54Z")
        .pod_sets(
            pod_set(None, None).containers(
                container("c0", image=None, requests={"nvidia.com/gpu": "lots"})
            )
        )
        .build()
    )
    assert errors_of(raw) == [
        (
            "spec.podSets[0].template.spec.containers[0].resources.requests[nvidia.com/gpu]",
            '"lots" is not a valid quantity (examples: 9, 500m, 36Gi)',
        )
    ]


def test_partial_model_keeps_the_good_fields() -> None:
    with pytest.raises(ObjectParseError) as caught:
        parse_object(
            cluster_queue()
            .namespace_selector(None)
            .spec(
                cohortName="team",
                resourceGroups=[resource_group(flavor_quotas("default").resource("cpu", "x"))],
            )
            .build()
        )
    partial = caught.value.partial
    assert isinstance(partial, ClusterQueue)
    assert partial.spec.cohort_name == "team"
    assert partial.spec.resource_groups[0].flavors[0].resources[0].nominal_quota is None


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ([], ""),
        ("ClusterQueue", ""),
        ({"kind": "ClusterQueue"}, "apiVersion"),
        ({"apiVersion": V1BETA2}, "kind"),
        ({"apiVersion": V1BETA2, "kind": "Queue"}, "kind"),
        ({"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "ClusterQueue"}, "apiVersion"),
        ({"apiVersion": "batch/v1", "kind": "Job"}, "apiVersion"),
        ({"apiVersion": V1BETA2, "kind": "ClusterQueue", "spec": []}, "spec"),
        (
            {"apiVersion": V1BETA2, "kind": "ClusterQueue", "metadata": {"labels": {"a": 1}}},
            "metadata.labels[a]",
        ),
    ],
)
def test_wrong_shapes_are_parse_errors(raw: object, field: str) -> None:
    assert [f for f, _ in errors_of(raw)] == [field]


def test_null_fields_are_absent() -> None:
    cq = parse_cluster_queue(
        cluster_queue()
        .namespace_selector(None)
        .spec(queueingStrategy=None, preemption=None, resourceGroups=None)
        .build()
    )
    assert cq.spec.queueing_strategy == "BestEffortFIFO" and cq.spec.resource_groups == ()


def test_parsed_models_are_immutable() -> None:
    cq = parse_cluster_queue(
        cluster_queue()
        .namespace_selector(None)
        .spec(resourceGroups=[resource_group(flavor_quotas("default").resource("cpu", 1))])
        .build()
    )
    with pytest.raises(AttributeError):
        cq.spec.stop_policy = "Hold"  # type: ignore[misc]
    with pytest.raises(TypeError):
        cq.metadata.labels["x"] = "y"  # type: ignore[index]
    assert isinstance(cq.spec.resource_groups, tuple)


# --- never a crash ---------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)

KINDS = [
    "ResourceFlavor",
    "ClusterQueue",
    "LocalQueue",
    "Cohort",
    "Workload",
    "WorkloadPriorityClass",
    "AdmissionCheck",
    "MultiKueueConfig",
    "MultiKueueCluster",
    "Topology",
]
FIELDS = [
    "metadata",
    "spec",
    "status",
    "resourceGroups",
    "podSets",
    "template",
    "containers",
    "resources",
    "requests",
    "flavors",
    "nominalQuota",
    "name",
    "count",
    "value",
    "admission",
    "conditions",
    "podSetAssignments",
    "clusterSource",
    "kubeConfig",
    "preemption",
    "fairSharing",
    "weight",
    "labels",
]


def shaped(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(FIELDS), children, max_size=5
    )


kueue_like = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from([V1BETA2, "config.kueue.x-k8s.io/v1beta2"]),
        "kind": st.sampled_from(KINDS + ["Configuration"]),
    },
    optional={
        "metadata": st.recursive(json_values, shaped, max_leaves=10),
        "spec": st.recursive(json_values, shaped, max_leaves=25),
        "status": st.recursive(json_values, shaped, max_leaves=15),
        "value": json_values,
    },
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(json_values | kueue_like)
def test_any_json_gives_a_model_or_a_parse_error(raw: Any) -> None:
    try:
        model = parse_object(raw)
    except ParseError as problem:
        assert problem.errors and all(isinstance(item.field, str) for item in problem.errors)
    else:
        assert model.kind == raw["kind"]


def test_a_valid_workload_round_trips_its_raw_template() -> None:
    template = {"spec": {"containers": [container("c0", image=None, requests={"cpu": 1})]}}
    wl = parse_object(
        workload("w", "ns")
        .uid(None)
        .created("2025-03-07T21:19:54Z")
        .spec(podSets=[{"template": template}])
        .build()
    )
    assert isinstance(wl, Workload)
    assert wl.spec.pod_sets[0].template is not None
    assert wl.spec.pod_sets[0].template.raw == template
