"""Property: a legacy (v1alpha1, ``quota.min/max``) ClusterQueue and its
v1beta2 conversion (``scheduler.api.convert.to_hub``) admit the same
workloads, with the same flavors, messages and usage."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scheduler.api.convert import to_hub
from scheduler.cli.cluster import InvalidInput, build_cluster
from scheduler.cli.loader import Document
from scheduler.cli.simulate import snapshot
from tests.builders import container, pod_set, workload

FLAVORS = ("f0", "f1")


@st.composite
def legacy_cluster_queue(draw: Any, name: str, cohort: str | None) -> dict[str, Any]:
    flavors = draw(st.sampled_from([("f0",), ("f1",), ("f0", "f1"), ("f1", "f0")]))
    entries = []
    for flavor in flavors:
        minimum = draw(st.integers(0, 8))
        quota: dict[str, Any] = {"min": minimum}
        if cohort is not None and draw(st.booleans()):
            quota["max"] = minimum + draw(st.integers(0, 4))
        entries.append({"name": flavor, "quota": quota})
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resources": [{"name": "cpu", "flavors": entries}],
    }
    if cohort is not None:
        spec["cohort"] = cohort
    if draw(st.booleans()):
        spec["queueingStrategy"] = "StrictFIFO"
    return {
        "apiVersion": "kueue.x-k8s.io/v1alpha1",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }


def report(objects: list[dict[str, Any]]) -> dict[str, Any]:
    documents = [Document("generated", index + 1, raw) for index, raw in enumerate(objects)]
    result, steady = snapshot(build_cluster(documents, io.StringIO()))
    assert steady
    return result


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    with_cohort=st.booleans(),
    requests=st.lists(
        st.tuples(st.sampled_from(["qa", "qb"]), st.integers(1, 6)), min_size=1, max_size=6
    ),
)
def test_legacy_cluster_queues_and_their_conversions_admit_the_same(
    data: Any, with_cohort: bool, requests: list[tuple[str, int]]
) -> None:
    cohort = "co" if with_cohort else None
    legacy = [data.draw(legacy_cluster_queue(name, cohort)) for name in ("cq-a", "cq-b")]
    common = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": f}}
        for f in FLAVORS
    ]
    common += [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": queue, "namespace": "ns"},
            "spec": {"clusterQueue": target},
        }
        for queue, target in (("qa", "cq-a"), ("qb", "cq-b"))
    ]
    workloads = [
        workload(f"w{index}", "ns")
        .as_written()
        .queue(queue)
        .pod_sets(pod_set().containers(container(image=None, requests={"cpu": str(cpu)})))
        .build()
        for index, (queue, cpu) in enumerate(requests)
    ]
    try:
        from_legacy = report(common[:2] + legacy + common[2:] + workloads)
    except InvalidInput:
        assume(False)
        return
    converted = [to_hub(item) for item in legacy]
    assert all(item["apiVersion"] == "kueue.x-k8s.io/v1beta2" for item in converted)
    assert report(common[:2] + converted + common[2:] + workloads) == from_legacy
