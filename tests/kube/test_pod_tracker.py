"""The pods of started jobs as the tracker counts them: live, and stranded on a gone node."""

from __future__ import annotations

from typing import Any

from scheduler.kube.informer import Event
from scheduler.kube.pod_tracker import PodTracker
from scheduler.kube.worklist import WorkList
from tests.builders import pod


def job_pod(name: str, node: str, *, deleting: bool = False) -> dict[str, Any]:
    built = (
        pod(name, "ml")
        .uid(f"{name}-uid")
        .labels({"kueue.x-k8s.io/job-uid": "job-uid"})
        .pod_spec(nodeName=node)
        .build()
    )
    built["status"] = {"phase": "Running"}
    if deleting:
        built["metadata"]["deletionTimestamp"] = "2026-11-28T06:00:00Z"
    return built


def test_a_pod_being_deleted_on_a_deleted_node_is_stranded_and_wakes_its_job() -> None:
    to_decide = WorkList()
    tracker = PodTracker({}, jobs_to_decide=to_decide)
    nodes = {"worker-1", "worker-2"}
    for item in (job_pod("a", "worker-1"), job_pod("b", "worker-2")):
        tracker.on_job_pod(Event("ADDED", item, f"ml/{item['metadata']['name']}"))
    to_decide.take()
    tracker.on_job_pod(Event("MODIFIED", job_pod("a", "worker-1", deleting=True), "ml/a"))
    assert to_decide.take() == {"job-uid"}, "being deleted: decided again"
    assert tracker.live_pods("job-uid") == 2
    assert tracker.stranded_pods("job-uid", nodes.__contains__) == 0, "its node still exists"

    nodes.discard("worker-1")
    tracker.node_gone("worker-1")
    assert to_decide.take() == {"job-uid"}, "the node went: decided again"
    assert tracker.stranded_pods("job-uid", nodes.__contains__) == 1
    nodes.discard("worker-2")
    assert tracker.stranded_pods("job-uid", nodes.__contains__) == 1, "b is not being deleted"

    tracker.on_job_pod(Event("DELETED", job_pod("a", "worker-1", deleting=True), "ml/a"))
    assert tracker.stranded_pods("job-uid", nodes.__contains__) == 0
    tracker.node_gone("worker-1")
    assert to_decide.take() == {"job-uid"}, "from the pod's deletion only"
