"""The deployment framework's webhook: a queued Deployment's pod template is marked for queueing."""

from __future__ import annotations

import copy

import jsonpatch

from scheduler.jobs.pod import gate
from tests.builders import deployment
from webhook.settings import WebhookSettings

from .conftest import ClientFactory, patch_of, post_review
from .reviews import QUEUE, admission_review

MUTATE = "/mutate-apps-v1-deployment"
ENABLED = WebhookSettings(frameworks=("batch/job", "pod", "deployment"))
PARENT = "kueue.x-k8s.io/pod-suspending-parent"


async def test_the_queue_name_reaches_the_pods_and_marks_them_queued_by_their_parent(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    sent = (
        deployment("web", "team-a", 2)
        .labels({QUEUE: "user-queue", "kueue.x-k8s.io/priority-class": "high"})
        .image("i")
        .build()
    )
    for operation in ("CREATE", "UPDATE"):
        review = admission_review(sent, operation=operation, old=sent)
        response = await post_review(client, MUTATE, review)
        result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
        template = result["spec"]["template"]["metadata"]
        assert template["labels"] == {
            "app": "web",
            QUEUE: "user-queue",
            "kueue.x-k8s.io/managed": "true",
            "kueue.x-k8s.io/priority-class": "high",
        }
        assert template["annotations"] == {PARENT: "deployment"}
        assert result["spec"]["selector"] == sent["spec"]["selector"]


async def test_an_unqueued_or_disabled_deployment_is_left_alone(
    make_client: ClientFactory,
) -> None:
    enabled = await make_client(ENABLED)
    response = await post_review(
        enabled,
        MUTATE,
        admission_review(deployment("web", "team-a", 2).labels().image("i").build()),
    )
    assert response == {"uid": response["uid"], "allowed": True}
    disabled = await make_client(WebhookSettings(frameworks=("batch/job", "pod")))
    sent = deployment("web", "team-a", 2).queue("q").image("i").build()
    response = await post_review(disabled, MUTATE, admission_review(sent))
    assert response == {"uid": response["uid"], "allowed": True}


def test_a_deployments_pod_is_gated_without_kuotas_finalizer() -> None:
    pod = {
        "metadata": {
            "labels": {QUEUE: "q"},
            "annotations": {PARENT: "deployment"},
        },
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    gated = gate(pod)
    assert gated["spec"]["schedulingGates"] == [
        {"name": "kueue.x-k8s.io/admission"},
        {"name": "kueue.x-k8s.io/topology"},
    ]
    assert "finalizers" not in gated["metadata"], "its ReplicaSet replaces it; Kueue adds none"


async def test_a_queued_statefulsets_template_is_marked_without_its_uid_or_size(
    make_client: ClientFactory,
) -> None:
    """On create the UID is unknown, so the template carries no group name (the scheduler
    places each pod in ``GetWorkloadName(uid, name)``'s group), nor the replica count:
    scaling is no new revision."""
    client = await make_client(
        WebhookSettings(frameworks=("batch/job", "pod", "deployment", "statefulset"))
    )
    sent = (
        deployment("web", "team-a", 2)
        .queue("user-queue")
        .image("i")
        .set(kind="StatefulSet")
        .build()
    )
    sent["metadata"]["name"] = "db"
    sent["spec"]["replicas"] = 3
    response = await post_review(client, "/mutate-apps-v1-statefulset", admission_review(sent))
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    template = result["spec"]["template"]["metadata"]
    assert template["labels"] == {"app": "web", QUEUE: "user-queue"}
    assert template["annotations"] == {PARENT: "statefulset"}


async def test_a_statefulsets_new_queue_name_leaves_its_template_as_it_was(
    make_client: ClientFactory,
) -> None:
    """A changed template is a new revision, never rolled out while the pods wait gated
    (Kueue's two-phase pattern): the scheduler relabels the pods instead."""
    client = await make_client(
        WebhookSettings(frameworks=("batch/job", "pod", "deployment", "statefulset"))
    )
    old = deployment("web", "team-a", 2).queue("first").image("i").set(kind="StatefulSet").build()
    marked = jsonpatch.apply_patch(
        copy.deepcopy(old),
        patch_of(await post_review(client, "/mutate-apps-v1-statefulset", admission_review(old))),
    )
    moved = copy.deepcopy(marked)
    moved["metadata"]["labels"][QUEUE] = "second"
    review = admission_review(moved, operation="UPDATE", old=marked)
    response = await post_review(client, "/mutate-apps-v1-statefulset", review)
    result = jsonpatch.apply_patch(copy.deepcopy(moved), patch_of(response))
    assert result["spec"]["template"] == marked["spec"]["template"]
    assert result["spec"]["template"]["metadata"]["labels"][QUEUE] == "first"


async def test_with_manage_jobs_without_queue_name_an_unqueued_statefulset_is_marked(
    make_client: ClientFactory,
) -> None:
    """Kueue queues a StatefulSet naming no queue all the same: its pods are held back as one
    group, whose Workload waits until the StatefulSet names a queue."""
    frameworks = ("batch/job", "pod", "deployment", "statefulset")
    managing = await make_client(
        WebhookSettings(frameworks=frameworks, manage_jobs_without_queue_name=True)
    )

    def unqueued(namespace: str) -> dict:
        built = deployment("web", namespace, 2).image("i").set(kind="StatefulSet").build()
        built["metadata"]["name"] = "db"
        return built

    sent = unqueued("team-a")
    response = await post_review(managing, "/mutate-apps-v1-statefulset", admission_review(sent))
    template = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))["spec"]["template"]
    assert template["metadata"]["annotations"] == {PARENT: "statefulset"}
    assert QUEUE not in template["metadata"]["labels"]

    system = unqueued("kube-system")
    response = await post_review(managing, "/mutate-apps-v1-statefulset", admission_review(system))
    assert response == {"uid": response["uid"], "allowed": True}, "never in kube-system"
    web = deployment("web", "team-a", 2).image("i").build()
    response = await post_review(managing, MUTATE, admission_review(web))
    assert response == {"uid": response["uid"], "allowed": True}, "a Deployment's pods: one by one"
    off = await make_client(WebhookSettings(frameworks=frameworks))
    response = await post_review(off, "/mutate-apps-v1-statefulset", admission_review(sent))
    assert response == {"uid": response["uid"], "allowed": True}, "the setting off"
