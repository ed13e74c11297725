"""The pod framework's webhook: a queued plain Pod is gated, labelled and finalized at creation."""

from __future__ import annotations

import copy

import jsonpatch

from tests.builders import pod
from webhook.settings import WebhookSettings

from .conftest import ClientFactory, patch_of, post_review
from .reviews import QUEUE, admission_review

MUTATE = "/mutate--v1-pod"
ENABLED = WebhookSettings(frameworks=("batch/job", "pod"))
GATE = {"name": "kueue.x-k8s.io/admission"}
TOPOLOGY_GATE = {"name": "kueue.x-k8s.io/topology"}


async def test_a_queued_pod_is_gated_labelled_managed_and_finalized(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = pod("p", "team-a").queue("user-queue").image("i").build()
    response = await post_review(client, MUTATE, admission_review(sent))
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["spec"]["schedulingGates"] == [GATE, TOPOLOGY_GATE]
    assert result["metadata"]["labels"] == {QUEUE: "user-queue", "kueue.x-k8s.io/managed": "true"}
    assert result["metadata"]["finalizers"] == ["kueue.x-k8s.io/managed"]
    assert len(result["metadata"]["annotations"]["kueue.x-k8s.io/role-hash"]) == 8
    assert result["spec"]["containers"] == sent["spec"]["containers"]


async def test_other_gates_and_finalizers_are_kept(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    sent = pod("p", "team-a").queue("q").image("i").finalizers("example.com/mine").build()
    sent["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    response = await post_review(client, MUTATE, admission_review(sent))
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["spec"]["schedulingGates"] == [{"name": "example.com/wait"}, GATE, TOPOLOGY_GATE]
    assert result["metadata"]["finalizers"] == ["example.com/mine", "kueue.x-k8s.io/managed"]


async def test_unqueued_pods_and_pods_of_managed_jobs_are_left_alone(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    owned = pod("p", "team-a").queue("q").image("i").owner("Job", "j", "u", controller=True).build()
    for sent in (pod("p", "team-a").labels().image("i").build(), owned):
        response = await post_review(client, MUTATE, admission_review(sent))
        assert response == {"uid": response["uid"], "allowed": True}


async def test_pods_are_left_alone_when_the_framework_is_not_enabled(
    make_client: ClientFactory,
) -> None:
    client = await make_client(WebhookSettings(frameworks=("batch/job",)))
    response = await post_review(
        client, MUTATE, admission_review(pod("p", "team-a").queue("q").image("i").build())
    )
    assert response == {"uid": response["uid"], "allowed": True}


async def test_a_queued_pod_asking_for_a_topology_is_gated_for_its_domain(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = pod("p", "team-a").queue("q").image("i").build()
    sent["metadata"]["annotations"] = {"kueue.x-k8s.io/podset-required-topology": "rack"}
    response = await post_review(client, MUTATE, admission_review(sent))
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["spec"]["schedulingGates"] == [GATE, TOPOLOGY_GATE]


async def test_a_queued_pod_with_a_malformed_topology_is_refused_naming_the_annotation(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = pod("p", "team-a").queue("q").image("i").build()
    sent["metadata"]["annotations"] = {
        "kueue.x-k8s.io/podset-required-topology": "rack",
        "kueue.x-k8s.io/podset-preferred-topology": "block",
    }
    response = await post_review(client, MUTATE, admission_review(sent))
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert "metadata.annotations" in message and "more than one topology annotation" in message


async def test_a_pods_rank_label_is_copied_from_the_label_its_annotation_names(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = pod("p", "team-a").queue("q").image("i").build()
    sent["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = "3"
    sent["metadata"]["annotations"] = {
        "kueue.x-k8s.io/pod-group-pod-index-label": "apps.kubernetes.io/pod-index"
    }
    response = await post_review(client, MUTATE, admission_review(sent))
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["metadata"]["labels"]["kueue.x-k8s.io/pod-group-pod-index"] == "3"


async def test_the_pods_of_a_job_placed_by_topology_are_not_refused(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = pod("p", "team-a").queue("q").image("i").owner("Job", "j", "u", controller=True).build()
    sent["metadata"]["annotations"] = {"kueue.x-k8s.io/podset-required-topology": "rack"}
    response = await post_review(client, MUTATE, admission_review(sent))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_a_pod_its_parent_queues_is_gated_before_it_names_a_queue(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = pod("p", "team-a").labels().image("i").build()
    sent["metadata"]["annotations"] = {"kueue.x-k8s.io/pod-suspending-parent": "Other"}
    response = await post_review(client, MUTATE, admission_review(sent))
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["spec"]["schedulingGates"] == [GATE, TOPOLOGY_GATE]
    assert len(result["metadata"]["annotations"]["kueue.x-k8s.io/role-hash"]) == 8
    assert "finalizers" not in result["metadata"], "its parent replaces it"
    assert "kueue.x-k8s.io/managed" not in (result["metadata"].get("labels") or {})
