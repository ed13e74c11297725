"""TrainJob admission (trainer.kubeflow.org/trainjob, docs/validation.md#jobs): the webhook
reads the runtime a TrainJob names through its lookup and applies the topology rules to the
pod templates of the JobSet Trainer would make from it, with Kueue's hint; without the runtime
only the rules every kind shares run.  A queued TrainJob is suspended at creation and given
kuota's runtime patch (manager ``kueue.x-k8s.io/manager``), as Kueue's webhook does."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from webhook.lookup import StaticLookup
from webhook.settings import WebhookSettings

from .conftest import ClientFactory, patch_of, post_review
from .reviews import QUEUE, SCHEDULER, admission_review

API_VERSION = "trainer.kubeflow.org/v1alpha1"
MUTATE = "/mutate-trainer-kubeflow-org-v1alpha1-trainjob"
VALIDATE = "/validate-trainer-kubeflow-org-v1alpha1-trainjob"
ENABLED = WebhookSettings(frameworks=("batch/job", "trainer.kubeflow.org/trainjob"))
KUEUE_MANAGER = "kueue.x-k8s.io/manager"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
HINT = (
    '. Adjust either the "TrainJob.spec.runtimePatches" or the "TrainingRuntime.Template" '
    "annotations for the corresponding Job"
)
MORE_THAN_ONE = (
    "must not contain more than one topology annotation: "
    '["kueue.x-k8s.io/podset-required-topology", "kueue.x-k8s.io/podset-preferred-topology", '
    '"kueue.x-k8s.io/podset-unconstrained-topology"]'
)


def runtime(
    name: str = "torch-distributed",
    *,
    kind: str = "ClusterTrainingRuntime",
    namespace: str | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A runtime of one replicated job ``node`` (the trainer step), its pod template carrying
    ``annotations``."""
    pod_template: dict[str, Any] = {
        "spec": {"containers": [{"name": "node", "image": "pytorch/pytorch"}]}
    }
    if annotations:
        pod_template["metadata"] = {"annotations": annotations}
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": metadata,
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {
                                    "labels": {
                                        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
                                    }
                                },
                                "spec": {"template": pod_template},
                            },
                        }
                    ]
                }
            },
        },
    }


def trainjob(
    *,
    queue: str | None = "user-queue",
    suspend: bool | None = True,
    runtime_ref: dict[str, Any] | None = None,
    patches: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """TrainJob ``team-a/train`` naming ClusterTrainingRuntime ``torch-distributed``."""
    spec: dict[str, Any] = {
        "runtimeRef": runtime_ref
        or {
            "apiGroup": "trainer.kubeflow.org",
            "kind": "ClusterTrainingRuntime",
            "name": "torch-distributed",
        },
        "trainer": {"numNodes": 2},
    }
    if suspend is not None:
        spec["suspend"] = suspend
    if patches is not None:
        spec["runtimePatches"] = patches
    metadata: dict[str, Any] = {"name": "train", "namespace": "team-a", "uid": "uid-train"}
    if queue is not None:
        metadata["labels"] = {QUEUE: queue}
    return {"apiVersion": API_VERSION, "kind": "TrainJob", "metadata": metadata, "spec": spec}


def annotation_patch(annotations: dict[str, str], manager: str = KUEUE_MANAGER) -> dict[str, Any]:
    """A runtime patch giving the pods of replicated job ``node`` these annotations."""
    pod_template = {"metadata": {"annotations": annotations}}
    return {
        "manager": manager,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {"name": "node", "template": {"spec": {"template": pod_template}}}
                    ]
                }
            }
        },
    }


def known(lookup: StaticLookup, obj: dict[str, Any]) -> None:
    metadata = obj["metadata"]
    key = (obj["apiVersion"], obj["kind"], metadata.get("namespace", ""), metadata["name"])
    lookup.objects[key] = obj


BOTH = {PREFERRED: "cloud.com/block", REQUIRED: "cloud.com/block"}


async def test_an_invalid_topology_annotation_in_the_runtime_is_denied_with_the_hint(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    known(lookup, runtime(annotations=BOTH))
    client = await make_client(ENABLED)
    response = await post_review(client, VALIDATE, admission_review(trainjob()))
    assert response["allowed"] is False
    assert response["status"]["message"] == "job[node].annotations: " + MORE_THAN_ONE + HINT
    assert response["status"]["details"]["causes"] == [
        {"field": "job[node].annotations", "message": MORE_THAN_ONE + HINT}
    ]


async def test_an_invalid_topology_annotation_in_a_patch_is_denied_on_create_and_update(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    known(lookup, runtime())
    client = await make_client(ENABLED)
    sent = trainjob(patches=[annotation_patch(BOTH, manager="example.com/user")])
    for operation in ("CREATE", "UPDATE"):
        review = admission_review(sent, operation=operation, old=trainjob())
        response = await post_review(client, VALIDATE, review)
        assert response["allowed"] is False, operation
        assert response["status"]["message"].endswith(HINT), operation


async def test_a_namespaced_runtime_is_read_from_the_trainjobs_namespace(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    known(lookup, runtime("mine", kind="TrainingRuntime", namespace="other", annotations=BOTH))
    client = await make_client(ENABLED)
    sent = trainjob(runtime_ref={"kind": "TrainingRuntime", "name": "mine"})
    response = await post_review(client, VALIDATE, admission_review(sent))
    assert response["allowed"] is True, "the runtime of another namespace is not this one's"
    known(lookup, runtime("mine", kind="TrainingRuntime", namespace="team-a", annotations=BOTH))
    response = await post_review(client, VALIDATE, admission_review(sent))
    assert response["allowed"] is False
    assert response["status"]["message"].endswith(HINT)


async def test_a_valid_topology_request_is_allowed(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    known(lookup, runtime(annotations={REQUIRED: "cloud.com/block"}))
    client = await make_client(ENABLED)
    response = await post_review(client, VALIDATE, admission_review(trainjob()))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_without_the_runtime_only_the_shared_rules_run(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    client = await make_client(ENABLED)
    with_bad_patch = trainjob(patches=[annotation_patch(BOTH)])
    response = await post_review(client, VALIDATE, admission_review(with_bad_patch))
    assert response["allowed"] is True, response
    assert lookup.calls >= 1, "the runtime was looked for"
    bad_queue = trainjob(queue="queue_name", patches=[annotation_patch(BOTH)])
    response = await post_review(client, VALIDATE, admission_review(bad_queue))
    assert response["allowed"] is False
    causes = response["status"]["details"]["causes"]
    assert [cause["field"] for cause in causes] == [f"metadata.labels[{QUEUE}]"]


async def test_a_queued_trainjob_created_unsuspended_is_refused(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    known(lookup, runtime())
    client = await make_client(ENABLED)
    response = await post_review(client, VALIDATE, admission_review(trainjob(suspend=False)))
    assert response["allowed"] is False
    assert response["status"]["message"].startswith(
        "spec.suspend: a queued job must be created suspended (spec.suspend: true)"
    )
    running = trainjob(suspend=False)
    by_scheduler = admission_review(running, operation="UPDATE", old=trainjob(), user=SCHEDULER)
    response = await post_review(client, VALIDATE, by_scheduler)
    assert response["allowed"] is True, "kuota's scheduler starts it"


async def test_a_failed_runtime_lookup_is_an_internal_error(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    lookup.failing = True
    client = await make_client(ENABLED)
    response = await post_review(client, VALIDATE, admission_review(trainjob()))
    assert response["allowed"] is False
    assert response["status"]["code"] == 500
    assert response["status"]["message"].startswith("kuota could not read what the job names")


async def test_a_queued_trainjob_is_suspended_and_given_kuotas_runtime_patch(
    make_client: ClientFactory,
) -> None:
    client = await make_client(ENABLED)
    user = annotation_patch({"note": "x"}, manager="example.com/user")
    sent = trainjob(suspend=False, patches=[user])
    response = await post_review(client, MUTATE, admission_review(sent))
    result = jsonpatch.apply_patch(copy.deepcopy(sent), patch_of(response))
    assert result["spec"]["suspend"] is True
    assert result["spec"]["runtimePatches"] == [
        user,
        {"manager": KUEUE_MANAGER, "trainingRuntimeSpec": {"template": {"spec": {}}}},
    ]
    assert result["metadata"]["labels"] == {QUEUE: "user-queue"}
    again = await post_review(client, MUTATE, admission_review(result))
    applied_twice = jsonpatch.apply_patch(copy.deepcopy(result), patch_of(again))
    assert applied_twice == result, "a TrainJob that has kuota's patch does not get a second"


async def test_an_unqueued_trainjob_is_left_alone(make_client: ClientFactory) -> None:
    client = await make_client(ENABLED)
    sent = trainjob(queue=None, suspend=None)
    response = await post_review(client, MUTATE, admission_review(sent))
    assert response == {"uid": response["uid"], "allowed": True}


async def test_trainjobs_are_left_alone_when_the_framework_is_not_enabled(
    make_client: ClientFactory, lookup: StaticLookup
) -> None:
    known(lookup, runtime(annotations=BOTH))
    client = await make_client(WebhookSettings(frameworks=("batch/job",)))
    for path in (MUTATE, VALIDATE):
        response = await post_review(client, path, admission_review(trainjob(suspend=False)))
        assert response == {"uid": response["uid"], "allowed": True}, path
