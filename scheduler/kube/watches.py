"""Which kinds the scheduler watches, and where each one's events go.

One informer per kind, all through the same REST layer: the kuota kinds the
engine needs go to :meth:`ClusterState.on_kueue`, every kind whose objects
get Workloads (:func:`scheduler.jobs.job_integrations`) and is enabled to
:meth:`ClusterState.on_job`, the pods of started jobs to the state's ``pods``
(:class:`~scheduler.kube.pod_tracker.PodTracker`), Namespaces and
PriorityClasses to its ``settings``
(:class:`~scheduler.kube.cluster_settings.ClusterSettings`); ``state`` is
asked for on every event, so the service can swap in a rebuilt state (a
replica that stepped down) without restarting the informers.  LimitRanges
and RuntimeClasses are watched for what they add to a Workload's requests
(docs/scheduling.md#workload-usage).  Every event also calls ``on_change``
(the scheduling loop's wake-up), so a change is acted on at once instead of
at the next idle tick.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Final

from scheduler.api import objects
from scheduler.api.refs import HUB_VERSION, KUEUE_GROUP, KUEUE_PLURALS
from scheduler.jobs import (
    GateOnCreate,
    Integration,
    ReplicaGroups,
    ResolvedThroughReference,
    capability,
    job_integrations,
    kinds_with,
)
from scheduler.jobs.start_placement import STARTED_PODS_SELECTOR
from scheduler.jobs.unmanaged_kinds import QUEUED_SELECTOR, UNMANAGED_KINDS, UnmanagedKind
from scheduler.kube.informer import Event, Informer, Source
from scheduler.kube.rest import Resource, RestClient
from scheduler.kube.source import KubeSource, OptionalKindSource, WhenNeededSource
from scheduler.kube.state import KUEUE_KINDS, ClusterState

WATCHED_KUEUE_PLURALS: Final = {kind: KUEUE_PLURALS[kind] for kind in KUEUE_KINDS}
"""Kind -> resource of every kuota kind the scheduler lists and watches (its RBAC follows)."""
BUILT_IN_GROUPS: Final = frozenset({"", "apps", "batch"})
"""API groups every API server serves; any other kind may lack its CRD."""


def kind_resource(integration: Integration) -> Resource:
    """Where the objects of an integration's kind live: pure."""
    version = integration.api_version.rpartition("/")[2]
    return Resource(integration.group, version, integration.resource)


NAMESPACES: Final = Resource("", "v1", "namespaces")
PODS: Final = Resource("", "v1", "pods")
NODES: Final = Resource("", "v1", "nodes")
PRIORITY_CLASSES: Final = Resource("scheduling.k8s.io", "v1", "priorityclasses")
LIMIT_RANGES: Final = Resource("", "v1", "limitranges")
RUNTIME_CLASSES: Final = Resource("node.k8s.io", "v1", "runtimeclasses")


def scheduler_informers(
    rest: RestClient,
    state: Callable[[], ClusterState],
    *,
    on_change: Callable[[], None],
    frameworks: Collection[str] = ("batch/job",),
    never_managed: Collection[str] = ("kube-system", "kueue-system"),
    on_unmanaged: Callable[[UnmanagedKind, Event], None] | None = None,
    without_queue_name: bool = False,
) -> list[Informer]:
    """The scheduler's informers, each feeding ``state()`` and then calling ``on_change``.

    A job kind is watched only when ``frameworks`` (the Configuration's
    ``integrations.frameworks``) enables its integration, batch/v1 Jobs
    included: the webhook lets the jobs of a disabled framework through
    unsuspended, and a scheduler that still managed them would stop them
    after they started.  Every kind goes to the same handler (one Job
    controller for every integration).  A kind outside the built-in API
    groups may lack its CRD (JobSet): its informer then stays empty and says
    so once (:class:`OptionalKindSource`).  A kind gated at creation
    (:class:`~scheduler.jobs.GateOnCreate`: Pods) is watched only for the
    objects the webhook marked (``managed_label_selector``), never every Pod
    of the cluster, and never one in ``never_managed`` (``kube-system``,
    kuota's namespace), whatever its labels say.  The pods started for any
    job are watched too (``JobPod``: only those kuota labelled with their
    job's UID when it started the job), so a job's quota is released only
    once its last pod has stopped.  Nodes, and every Pod once a flavor names a
    Topology, are watched for topology-aware scheduling
    (docs/concepts.md#topology-aware-scheduling): what each bound pod takes
    on its node, and the gated pods of Workloads placed by topology;
    and a kind with replica groups
    (:class:`~scheduler.jobs.ReplicaGroups`: LeaderWorkerSets) is watched with
    its pods that wait outside a group (``unplaced_pod_selector``).
    The queued objects of the kinds kuota does not manage go to
    ``on_unmanaged``, when given (:mod:`scheduler.jobs.unmanaged_kinds`).
    """

    def then_wake(handler: Callable[[ClusterState, Event], None]) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            handler(state(), event)
            on_change()

        return handle

    informers = [
        Informer(
            kind,
            KubeSource(rest, Resource(KUEUE_GROUP, HUB_VERSION, plural)),
            then_wake(ClusterState.on_kueue),
        )
        for kind, plural in WATCHED_KUEUE_PLURALS.items()
    ]
    excluded = frozenset(never_managed)

    def on_marked(current: ClusterState, event: Event) -> None:
        if objects.namespace(event.object) not in excluded:
            current.on_job(event)

    for integration in job_integrations():
        if integration.framework not in frameworks:
            continue
        gated = capability(integration, GateOnCreate)
        selector = gated.managed_label_selector if gated is not None else ""
        kube = KubeSource(rest, kind_resource(integration), label_selector=selector)
        source: Source = kube
        if integration.group not in BUILT_IN_GROUPS:
            source = OptionalKindSource(kube, what=f"{integration.kind}s")
        handler = on_marked if gated is not None else ClusterState.on_job
        informers.append(Informer(integration.kind, source, then_wake(handler)))
    informers += _referenced_informers(rest, frameworks, then_wake)
    if on_unmanaged is not None:
        informers += _unmanaged_informers(rest, on_unmanaged, excluded)
    for kind in kinds_with(ReplicaGroups):
        replicas = capability(kind, ReplicaGroups)
        if kind.framework not in frameworks or replicas is None:
            continue
        informers += _replica_informers(
            kind, replicas, rest, then_wake, excluded, without_queue_name=without_queue_name
        )
    informers += [
        Informer(
            "JobPod",
            KubeSource(rest, PODS, label_selector=STARTED_PODS_SELECTOR),
            then_wake(lambda current, event: current.pods.on_job_pod(event)),
        ),
        Informer("Node", KubeSource(rest, NODES), then_wake(_on_node)),
        Informer(
            "PodOnNode",
            WhenNeededSource(
                KubeSource(rest, PODS),
                needed=lambda: (
                    state().engine.placements.uses_topology() or state().stuck_pods.enabled
                ),
                on_listed=lambda: state().topology.pods_listed(),
                what="every Pod, for topology-aware scheduling or failure recovery",
            ),
            then_wake(_on_pod),
        ),
        Informer(
            "Namespace",
            KubeSource(rest, NAMESPACES),
            then_wake(lambda current, event: current.settings.on_namespace(event)),
        ),
        Informer(
            "PriorityClass",
            KubeSource(rest, PRIORITY_CLASSES),
            then_wake(lambda current, event: current.settings.on_priority_class(event)),
        ),
        Informer(
            "LimitRange",
            KubeSource(rest, LIMIT_RANGES),
            then_wake(lambda current, event: current.settings.on_limit_range(event)),
        ),
        Informer(
            "RuntimeClass",
            KubeSource(rest, RUNTIME_CLASSES),
            then_wake(lambda current, event: current.settings.on_runtime_class(event)),
        ),
    ]
    return informers


def _on_referenced(current: ClusterState, event: Event) -> None:
    """An object jobs name for their pod sets (a TrainJob's runtime): those jobs are decided
    again."""
    current.jobs_to_decide.update(current.references.on_event(event))


def _on_node(current: ClusterState, event: Event) -> None:
    current.topology.on_node(event)
    current.stuck_pods.on_node(event)
    if event.type == "DELETED":
        current.pods.node_gone(objects.name(event.object))


def _on_pod(current: ClusterState, event: Event) -> None:
    current.topology.on_pod(event)
    current.stuck_pods.on_pod(event)


def _replica_informers(
    integration: Integration,
    replicas: ReplicaGroups,
    rest: RestClient,
    then_wake: Callable[[Callable[[ClusterState, Event], None]], Callable[[Event], None]],
    excluded: frozenset[str],
    *,
    without_queue_name: bool,
) -> list[Informer]:
    """The objects of a kind with replica groups, and their pods not in a group yet (with
    ``manageJobsWithoutQueueName``, the pods of the objects that name no queue too, when the
    kind queues those)."""

    def on_object(current: ClusterState, event: Event) -> None:
        if objects.namespace(event.object) not in excluded:
            current.on_job(event)

    def on_pod(current: ClusterState, event: Event) -> None:
        if objects.namespace(event.object) not in excluded:
            current.pods.on_unplaced_pod(integration, event)

    kube = KubeSource(rest, kind_resource(integration))
    source: Source = kube
    if integration.group not in BUILT_IN_GROUPS:
        source = OptionalKindSource(kube, what=f"{integration.kind}s")
    selector = replicas.unplaced_pod_selector
    if without_queue_name and replicas.unqueued_pod_selector is not None:
        selector = replicas.unqueued_pod_selector
    pods = KubeSource(rest, PODS, label_selector=selector)
    return [
        Informer(integration.kind, source, then_wake(on_object)),
        Informer(f"{integration.kind}Pod", pods, then_wake(on_pod)),
    ]


def _referenced_informers(
    rest: RestClient,
    frameworks: Collection[str],
    then_wake: Callable[[Callable[[ClusterState, Event], None]], Callable[[Event], None]],
) -> list[Informer]:
    """One informer per kind the enabled kinds refer to for their pod sets (a TrainJob's
    runtimes): their CRDs may be missing, which their informers say once."""
    informers = []
    for integration in kinds_with(ResolvedThroughReference):
        resolver = capability(integration, ResolvedThroughReference)
        if resolver is None or integration.framework not in frameworks:
            continue
        for referenced in resolver.referenced_kinds:
            group, _, version = referenced.api_version.rpartition("/")
            source = KubeSource(rest, Resource(group, version, referenced.resource))
            informers.append(
                Informer(
                    referenced.kind,
                    OptionalKindSource(source, what=f"{referenced.kind}s"),
                    then_wake(_on_referenced),
                )
            )
    return informers


def _unmanaged_informers(
    rest: RestClient,
    on_unmanaged: Callable[[UnmanagedKind, Event], None],
    excluded: frozenset[str],
) -> list[Informer]:
    """The objects with a queue label of each kind kuota does not manage, once it is served."""

    def handler(kind: UnmanagedKind) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            if objects.namespace(event.object) not in excluded:
                on_unmanaged(kind, event)

        return handle

    return [
        Informer(
            f"Unmanaged{kind.kind}",
            OptionalKindSource(
                KubeSource(
                    rest,
                    Resource(kind.group, kind.version, kind.resource),
                    label_selector=QUEUED_SELECTOR,
                ),
                what=f"{kind.kind}s (a kind kuota does not manage)",
            ),
            handler(kind),
        )
        for kind in UNMANAGED_KINDS
    ]
