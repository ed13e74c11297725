"""Where the informers of ``watches.py`` send each kind: the part of the current state that
keeps it, then the loop's wake-up."""

from __future__ import annotations

from typing import Any

from scheduler.api import objects
from scheduler.api.refs import JOB_UID_LABEL, QUEUE_NAME_LABEL
from scheduler.core.engine import Engine
from scheduler.jobs.unmanaged_kinds import UNMANAGED_KINDS
from scheduler.kube.cluster_settings import engine_record
from scheduler.kube.informer import Event
from scheduler.kube.source import OptionalKindSource
from scheduler.kube.state import ClusterState
from scheduler.kube.watches import scheduler_informers
from tests.builders import container, limit_range, pod, pod_set, runtime_class, workload
from tests.kube.fake_api import FakeApi

from .world import priority_class


def test_cluster_wide_kinds_and_started_jobs_pods_reach_their_part_of_the_state() -> None:
    state = ClusterState(Engine())
    woken: list[str] = []
    informers = {
        informer.name: informer
        for informer in scheduler_informers(
            FakeApi(), lambda: state, on_change=lambda: woken.append("wake")
        )
    }

    def deliver(name: str, obj: dict[str, Any]) -> None:
        informers[name].handler(Event("ADDED", obj, objects.key(obj)))

    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    namespace["metadata"]["labels"] = {"team": "a"}
    deliver("Namespace", namespace)
    assert state.settings.namespace_labels("ml") == {"team": "a"}
    deliver("PriorityClass", priority_class("high", 100, default=True))
    assert state.settings.classes().global_default == ("high", 100)
    deliver(
        "LimitRange",
        limit_range("defaults", "ml").item("Container", defaultRequest={"cpu": "1"}).build(),
    )
    assert state.settings.limit_defaults("ml")
    deliver("RuntimeClass", runtime_class("kata").overhead(cpu="250m").build())
    kata = (
        workload("w", "ml")
        .queue("lq")
        .pod_sets(
            pod_set().containers(container(requests={"cpu": "1"})).pod_spec(runtimeClassName="kata")
        )
        .build()
    )
    assert state.settings.engine_record(kata) != engine_record(kata), "the overhead is added"
    deliver("JobPod", pod("p", "ml").uid("pod-1").labels({JOB_UID_LABEL: "uid-train"}).build())
    assert state.pods.live_pods("uid-train") == 1
    assert len(woken) == 5, "every event wakes the loop"


def test_queued_objects_of_kinds_kuota_does_not_manage_reach_their_handler() -> None:
    state = ClusterState(Engine())
    seen: list[tuple[str, str]] = []
    informers = {
        informer.name: informer
        for informer in scheduler_informers(
            FakeApi(),
            lambda: state,
            on_change=lambda: None,
            never_managed=("kube-system", "kuota"),
            on_unmanaged=lambda kind, event: seen.append((kind.kind, objects.name(event.object))),
        )
    }
    tfjobs = informers["UnmanagedTFJob"]
    source = tfjobs.source
    assert isinstance(source, OptionalKindSource), "a kind whose CRD may be missing"
    assert source.source.label_selector == QUEUE_NAME_LABEL, "only the objects naming a queue"
    assert source.source.resource.path == "/apis/kubeflow.org/v1/tfjobs"
    for namespace in ("ml", "kube-system"):
        job = {"kind": "TFJob", "metadata": {"name": f"t-{namespace}", "namespace": namespace}}
        tfjobs.handler(Event("ADDED", job, objects.key(job)))
    assert seen == [("TFJob", "t-ml")], "never in kube-system or kuota's namespace"
    assert {f"Unmanaged{kind.kind}" for kind in UNMANAGED_KINDS} <= set(informers)
    without = scheduler_informers(FakeApi(), lambda: state, on_change=lambda: None)
    assert not [i for i in without if i.name.startswith("Unmanaged")]
