"""Adding a kind means adding one integration: the webhook, its registrations, the
scheduler's watches and ``kuota validate`` all find it through the registry."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from scheduler.api.field import FieldError, FieldPath, error
from scheduler.api.objects import queue_name
from scheduler.api.pipeline import review
from scheduler.jobs import (
    POD,
    POD_FRAMEWORK,
    AdmissionFacts,
    ApiAccess,
    FinishedState,
    JobIntegration,
    OwnController,
    PodSetInfo,
    SuspendOnCreate,
    capability,
    for_object,
    integrations,
    kinds_with,
    not_integrated,
    register,
    webhook_path,
)
from scheduler.jobs.protocol import with_queue_label
from scheduler.jobs.registry import unregister
from scheduler.kube.source import OptionalKindSource
from scheduler.kube.watches import scheduler_informers
from tests.kube.fake_api import FakeApi
from webhook.configurations import mutating_configuration, validating_configuration
from webhook.routes import admission_endpoints

FRAMEWORK = "example.com/widget"


class Widget:
    """A made-up kind with one pod set and one rule of its own."""

    framework = FRAMEWORK
    api_version = "example.com/v1"
    kind = "Widget"
    group = "example.com"
    resource = "widgets"
    access = ApiAccess(scheduler={"widgets": ("list", "watch", "patch")})

    def queue_name(self, job: Mapping[str, Any]) -> str:
        return queue_name(job)

    def pod_sets(self, job: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [{"name": "main", "count": 1, "template": {}}]

    def is_suspended(self, job: Mapping[str, Any]) -> bool:
        return bool(job.get("spec", {}).get("paused"))

    def suspend(self, job: Mapping[str, Any]) -> dict[str, Any]:
        result = copy.deepcopy(dict(job))
        result.setdefault("spec", {})["paused"] = True
        return result

    def run_with(self, job: Mapping[str, Any], pod_sets: Sequence[PodSetInfo]) -> dict[str, Any]:
        return dict(job)

    def restore(
        self, job: Mapping[str, Any], pod_sets: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        return dict(job)

    def finished(self, job: Mapping[str, Any]) -> FinishedState:
        return FinishedState(False)

    def active(self, job: Mapping[str, Any]) -> int:
        return 0

    def default(
        self, job: Mapping[str, Any], *, queue: str | None, suspend: bool
    ) -> dict[str, Any]:
        result = with_queue_label(job, queue)
        return self.suspend(result) if suspend else result

    def validate_create(self, job: Mapping[str, Any], *, facts: AdmissionFacts) -> list[FieldError]:
        if job.get("spec", {}).get("size") == "huge":
            return [error(FieldPath(("spec", "size")), "too big", rule="W-1")]
        return []

    def validate_update(
        self, job: Mapping[str, Any], old: Mapping[str, Any], *, facts: AdmissionFacts
    ) -> list[FieldError]:
        return self.validate_create(job, facts=facts)


@pytest.fixture
def widget() -> Iterator[JobIntegration]:
    integration = register(Widget())
    yield integration
    unregister(FRAMEWORK)


def test_a_registered_kind_is_served_registered_watched_and_validated(
    widget: JobIntegration,
) -> None:
    assert isinstance(widget, JobIntegration)
    assert widget in integrations()
    endpoints = admission_endpoints()
    assert webhook_path(widget, "mutate") == "/mutate-example-com-v1-widget"
    assert {"/mutate-example-com-v1-widget", "/validate-example-com-v1-widget"} <= set(endpoints)

    client = {"url": "https://127.0.0.1:9443"}
    mutating = {e["name"]: e for e in mutating_configuration(client)["webhooks"]}
    validating = {e["name"]: e for e in validating_configuration(client)["webhooks"]}
    entry = mutating["queued-widgets.mutate.kuota.io"]
    assert entry["rules"][0]["apiGroups"] == ["example.com"]
    assert entry["rules"][0]["resources"] == ["widgets"]
    assert entry["clientConfig"]["url"].endswith("/mutate-example-com-v1-widget")
    assert "queued-widgets.validate.kuota.io" in validating

    informers = scheduler_informers(
        FakeApi(), lambda: None, on_change=lambda: None, frameworks=("batch/job", FRAMEWORK)
    )
    (watched,) = [i for i in informers if i.name == "Widget"]
    assert isinstance(watched.source, OptionalKindSource)  # a CRD kind may be absent
    off = scheduler_informers(FakeApi(), lambda: None, on_change=lambda: None)
    assert "Widget" not in [i.name for i in off]

    raw = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    checked = review({**raw, "spec": {"size": "huge"}}, default_namespace="default")
    assert [(e.rule, e.message) for e in checked.errors] == [("W-1", "too big")]
    assert checked.namespace == "default"


def test_unregistering_takes_the_kind_away_again(widget: JobIntegration) -> None:
    unregister(FRAMEWORK)
    assert widget not in integrations()
    assert "/mutate-example-com-v1-widget" not in admission_endpoints()


def test_the_pod_family_is_found_by_the_registry_and_declares_its_own_decisions() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    assert for_object(pod) is POD
    assert capability(POD, OwnController) is POD
    assert POD in integrations()
    assert POD not in kinds_with(SuspendOnCreate)
    assert POD_FRAMEWORK not in not_integrated([POD_FRAMEWORK, "deployment", "statefulset"])

    endpoints = admission_endpoints()
    assert {"/mutate--v1-pod", "/mutate-apps-v1-deployment", "/mutate-apps-v1-statefulset"} <= set(
        endpoints
    )
    assert "/validate--v1-pod" not in endpoints
    assert endpoints["/mutate--v1-pod"] is not endpoints["/mutate-batch-v1-job"]

    client = {"url": "https://127.0.0.1:9443"}
    mutating = {e["name"]: e for e in mutating_configuration(client)["webhooks"]}
    validating = {e["name"] for e in validating_configuration(client)["webhooks"]}
    for plural, path in (
        ("pods", "/mutate--v1-pod"),
        ("deployments", "/mutate-apps-v1-deployment"),
        ("statefulsets", "/mutate-apps-v1-statefulset"),
    ):
        entry = mutating[f"queued-{plural}.mutate.kuota.io"]
        assert entry["clientConfig"]["url"].endswith(path)
        assert entry["objectSelector"]  # only objects naming a queue reach kuota
        assert f"unqueued-{plural}.mutate.kuota.io" not in mutating
        has_rules = plural == "statefulsets"  # Kueue's StatefulSet update rules
        assert (f"queued-{plural}.validate.kuota.io" in validating) is has_rules

    informers = scheduler_informers(
        FakeApi(), lambda: None, on_change=lambda: None, frameworks=("batch/job", "pod")
    )
    assert [i.name for i in informers].count("Pod") == 1  # the managed-Pods watch only
    with pytest.raises(ValueError):
        review(pod, default_namespace="default")  # kuota validate does not claim Pods
