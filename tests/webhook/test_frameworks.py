"""Admission of the framework kinds: what differs from a batch Job at the webhook.

A queued RayJob, RayCluster or RayService is suspended at creation (a
RayService through its cluster spec); the RayCluster KubeRay makes for a
queued RayJob carries the RayJob's queue name and runs unsuspended: it is
its owner's business, neither suspended nor refused (JOB-K1); a queued
LeaderWorkerSet has both its pod templates marked on create and update.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from scheduler.jobs import frameworks
from tests.builders import kubeflow_job, leader_worker_set, ray_cluster, ray_job, ray_service
from webhook.lookup import StaticLookup
from webhook.settings import WebhookSettings

from .conftest import ClientFactory, patch_of, post_review
from .reviews import QUEUE, admission_review

ALL = WebhookSettings(frameworks=frameworks())


def applied(sent: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    return jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))


async def test_queued_ray_objects_are_suspended_where_their_kind_keeps_it(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ALL)
    for sent, path, where in (
        (
            ray_job("j", "team-a").queue("q").suspend_field(False),
            "/mutate-ray-io-v1-rayjob",
            ("spec",),
        ),
        (
            ray_cluster("c", "team-a").queue("q").suspend_field(False),
            "/mutate-ray-io-v1-raycluster",
            ("spec",),
        ),
        (
            ray_service("s", "team-a").queue("q").suspend_field(False),
            "/mutate-ray-io-v1-rayservice",
            ("spec", "rayClusterConfig"),
        ),
    ):
        raw = sent.build()
        response = await post_review(client, path, admission_review(raw))
        result: Any = applied(raw, response)
        for key in where:
            result = result[key]
        assert result["suspend"] is True, path


async def test_a_rayjobs_cluster_is_left_to_the_rayjob(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    owner = ray_job("j", "team-a").uid("uid-j").queue("q").build()
    lookup.objects[("ray.io/v1", "RayJob", "team-a", "j")] = owner
    client = await make_client(ALL)
    child = ray_cluster("j-cluster", "team-a").queue("q").suspend_field(False).build()
    child["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "name": "j",
            "uid": "uid-j",
            "controller": True,
        }
    ]
    mutated = await post_review(client, "/mutate-ray-io-v1-raycluster", admission_review(child))
    assert mutated == {"uid": mutated["uid"], "allowed": True}, "not suspended"
    validated = await post_review(client, "/validate-ray-io-v1-raycluster", admission_review(child))
    assert validated["allowed"] is True, validated
    orphan = copy.deepcopy(child)
    del orphan["metadata"]["ownerReferences"]
    refused = await post_review(client, "/validate-ray-io-v1-raycluster", admission_review(orphan))
    assert refused["allowed"] is False
    assert "JOB-K1" not in refused["status"]["message"]
    assert "a queued job must be created suspended" in refused["status"]["message"]


async def test_a_queued_leaderworkerset_has_its_templates_marked_on_create_and_update(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ALL)
    path = "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset"
    sent = leader_worker_set("l", "team-a").queue("q").leader_template().build()
    for operation in ("CREATE", "UPDATE"):
        review = admission_review(sent, operation=operation, old=sent)
        result = applied(sent, await post_review(client, path, review))
        for name in ("leaderTemplate", "workerTemplate"):
            labels = result["spec"]["leaderWorkerTemplate"][name]["metadata"]["labels"]
            assert labels == {QUEUE: "q"}, (operation, name)
    unqueued = leader_worker_set("l", "team-a").build()
    response = await post_review(client, path, admission_review(unqueued))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_an_mpijob_is_suspended_and_held_through_its_run_policy(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ALL)
    sent = kubeflow_job("pi", "team-a").queue("q").replica("Worker", 2).run_policy(suspend=False)
    raw = sent.build()
    response = await post_review(
        client, "/mutate-kubeflow-org-v2beta1-mpijob", admission_review(raw)
    )
    assert applied(raw, response)["spec"]["runPolicy"]["suspend"] is True
    refused = await post_review(
        client, "/validate-kubeflow-org-v2beta1-mpijob", admission_review(raw)
    )
    assert refused["allowed"] is False
    assert refused["status"]["message"].startswith(
        "spec.runPolicy.suspend: a queued job must be created suspended "
        "(spec.runPolicy.suspend: true)"
    ), refused["status"]["message"]


async def test_on_a_multikueue_manager_each_kind_is_handed_over_where_it_keeps_managed_by(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    v1beta2 = "kueue.x-k8s.io/v1beta2"
    lookup.objects[(v1beta2, "LocalQueue", "team-a", "q")] = {"spec": {"clusterQueue": "cq"}}
    lookup.objects[(v1beta2, "ClusterQueue", "", "cq")] = {"spec": {"admissionChecks": ["mk"]}}
    lookup.objects[(v1beta2, "AdmissionCheck", "", "mk")] = {
        "spec": {"controllerName": "kueue.x-k8s.io/multikueue"}
    }
    client = await make_client(WebhookSettings(frameworks=frameworks(), multikueue_managed_by=True))
    mpijob = kubeflow_job("pi", "team-a").queue("q").replica("Worker", 2).build()
    result = applied(
        mpijob,
        await post_review(client, "/mutate-kubeflow-org-v2beta1-mpijob", admission_review(mpijob)),
    )
    assert result["spec"]["runPolicy"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert "managedBy" not in result["spec"]
    rayjob = ray_job("j", "team-a").queue("q").build()
    result = applied(
        rayjob, await post_review(client, "/mutate-ray-io-v1-rayjob", admission_review(rayjob))
    )
    assert result["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
