"""JobSets are watched only when enabled, and a cluster without the JobSet CRD is no error."""

from __future__ import annotations

import logging

import pytest

from scheduler.jobs import JOBSET as JOBSET_KIND
from scheduler.kube.informer import Event, Expired, Informer
from scheduler.kube.rest import NotFound
from scheduler.kube.source import KubeSource, OptionalKindSource
from scheduler.kube.state import ClusterState
from scheduler.kube.watches import kind_resource, scheduler_informers
from tests.kube.fake_api import FakeApi

JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "train", "namespace": "ml", "uid": "u1", "resourceVersion": "1"},
}


JOBSETS = kind_resource(JOBSET_KIND)


def never() -> ClusterState:
    raise AssertionError("no event expected")


def test_jobsets_are_watched_only_when_the_framework_is_enabled() -> None:
    api = FakeApi()
    default = [i.name for i in scheduler_informers(api, never, on_change=lambda: None)]
    assert "JobSet" not in default and "Job" in default
    enabled = scheduler_informers(
        api, never, on_change=lambda: None, frameworks=("batch/job", "jobset.x-k8s.io/jobset")
    )
    assert [i.name for i in enabled].count("JobSet") == 1


def test_batch_jobs_are_not_watched_when_their_framework_is_disabled() -> None:
    # The webhook lets such Jobs run unsuspended; the scheduler must not stop them afterwards.
    names = [
        i.name
        for i in scheduler_informers(
            FakeApi(), never, on_change=lambda: None, frameworks=("jobset.x-k8s.io/jobset",)
        )
    ]
    assert "Job" not in names and "JobSet" in names


async def test_a_missing_crd_lists_empty_says_so_once_and_looks_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = FakeApi()
    api.fail("LIST", "/jobsets", NotFound("the server could not find the requested resource"))
    api.fail("LIST", "/jobsets", NotFound("the server could not find the requested resource"))
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    source = OptionalKindSource(KubeSource(api, JOBSETS), what="JobSets", sleep=sleep)
    with caplog.at_level(logging.INFO, logger="kuota.informer"):
        assert await source.list() == ([], "")
        assert await source.list() == ([], "")
    said = [r.getMessage() for r in caplog.records if "CRD not installed" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("JobSets are not served")
    with pytest.raises(Expired):
        async for _ in source.watch(""):
            pass
    assert slept == [60.0]

    # The CRD is installed: the next list finds the JobSets.
    api.put(f"{JOBSETS.path}/train", JOBSET)  # the fake lists by path prefix
    items, _ = await source.list()
    assert [i["metadata"]["name"] for i in items] == ["train"]


async def test_the_informer_is_synced_without_the_crd() -> None:
    api = FakeApi()
    api.fail("LIST", "/jobsets", NotFound("no such resource"))
    seen: list[Event] = []
    informer = Informer(
        "JobSet", OptionalKindSource(KubeSource(api, JOBSETS), what="JobSets"), seen.append
    )
    await informer._relist()
    assert informer.synced.is_set() and seen == []


def test_only_managed_pods_are_watched_and_never_those_of_the_system_namespaces() -> None:
    from scheduler.core.engine import Engine

    api = FakeApi()
    state = ClusterState(Engine())
    default = [i.name for i in scheduler_informers(api, never, on_change=lambda: None)]
    assert "Pod" not in default
    informers = scheduler_informers(
        api,
        lambda: state,
        on_change=lambda: None,
        frameworks=("batch/job", "pod"),
        never_managed=("kube-system", "kuota"),
    )
    (pods,) = [i for i in informers if i.name == "Pod"]
    assert isinstance(pods.source, KubeSource)
    assert pods.source.label_selector == "kueue.x-k8s.io/managed=true"
    for namespace in ("kube-system", "kuota", "ml"):
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "p",
                "namespace": namespace,
                "uid": f"uid-{namespace}",
                "labels": {"kueue.x-k8s.io/managed": "true"},
            },
        }
        pods.handler(Event("ADDED", pod, f"{namespace}/p"))
    assert state.job("uid-ml") is not None and state.counts()["jobs"] == 1, (
        "kube-system and kuota's namespace are never touched"
    )
