"""What MultiKueue should write, decided from objects as read (pure).

Three questions, each one function:

1. **Is a worker usable?** :func:`kubeconfig_of` finds the kubeconfig a
   MultiKueueCluster points at (the Secret's key ``kubeconfig`` in kuota's
   namespace) or says why not; :func:`cluster_condition` turns that and the
   answer of a probe into the ``Active`` condition (``Active``/``Connected``
   when the worker answered, else Kueue's reasons: ``BadKubeConfig`` for a
   missing Secret, key or unreadable kubeconfig, ``ClientConnectionFailed``
   for a worker that refused, timed out or did not accept the credentials).
2. **Is an AdmissionCheck usable?** :func:`admission_check_condition`:
   ``Active`` when its parameters name a MultiKueueConfig whose clusters are
   all active (``SomeActiveClusters``, still True, when some are), else
   ``BadConfig`` or ``NoUsableClusters`` with Kueue's messages.
3. **What does a manager Workload need?** :func:`dispatch` follows Kueue's
   order for one Workload that holds quota and carries a MultiKueue check:

   a. no quota (released, evicted and released, never reserved) or finished:
      delete every remote copy; being evicted: delete them too, and once they
      are gone and the manager's Job is suspended, zero its copied pod counts
      (kuota releases the quota of an evicted Job only when it has no pods);
   a'. owned by anything but a batch/v1 Job (a JobSet, a Pod): the check is
      ``Rejected`` with Kueue's "No multikueue adapter found for owner kind"
      (admitted, it would run on the manager); a Workload without an owner is
      dispatched as a Workload alone;
   b. a remote copy finished: copy the remote Job's status to the manager's
      Job (the manager's Job controller then finishes the Workload as for any
      Job), or finish the Workload directly if it has no Job;
   c. a remote copy is admitted: delete the copies on the other workers,
      create the Job there (``prebuilt-workload-name`` and the origin label,
      no ``managedBy``, no selector), copy its status back, and mark the check
      ``Ready`` with ``status.clusterName``;
   d. the check is ``Ready`` but no admitted copy is visible: evicted on its
      worker (preempted there), ``Retry`` with Kueue's message; if the worker
      that ran it is unreachable, wait ``workerLostTimeout`` from when it was
      lost, then ``Retry``; if it answered and the copy is gone, ``Retry`` at
      once (the scheduler then releases the quota and requeues);
   e. the check is ``Pending``: create a copy on every active worker that has
      none (all at once, Kueue's default dispatcher) and nominate them.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import yaml

from scheduler.api import objects
from scheduler.api.refs import (
    ADMITTED,
    EVICTED,
    FINISHED,
    JOB_UID_LABEL,
    KUEUE_GROUP,
    MULTIKUEUE_CONTROLLER,
    MULTIKUEUE_KUBECONFIG_KEY,
    MULTIKUEUE_ORIGIN_LABEL,
    PREBUILT_WORKLOAD_KEY,
)

ACTIVE_REASON = "Active"
CONNECTED = "Connected"
BAD_KUBECONFIG = "BadKubeConfig"
CONNECTION_FAILED = "ClientConnectionFailed"
BAD_CONFIG = "BadConfig"
NO_USABLE_CLUSTERS = "NoUsableClusters"
SOME_ACTIVE_CLUSTERS = "SomeActiveClusters"
CHECK_ACTIVE_MESSAGE = "The admission check is active"
ADMITTING_REMOTE_LOST = "Admitting remote lost"
ADMITTING_REMOTE_GONE = "Admitting remote no longer exists"
DEFAULT_ORIGIN = "multikueue"
DEFAULT_WORKER_LOST_TIMEOUT = timedelta(minutes=15)

TEMPLATE_LABELS_SET_BY_THE_API = (
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
)
"""Pod-template labels the API server derives from a Job's UID: a new Job gets its own."""


# --- 1. worker clusters -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Condition:
    """A condition as decided: ``status`` True/False, Kueue's reason and message."""

    status: bool
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class KubeconfigProblem:
    """Why no kubeconfig could be read; becomes ``Active: False`` with ``reason``."""

    reason: str
    message: str


def secret_name(cluster: Mapping[str, Any]) -> str | KubeconfigProblem:
    """The Secret a MultiKueueCluster's kubeconfig lives in, or why there is none: pure.

    Reads v1beta2 (``spec.clusterSource.kubeConfig``) and the older form
    (``spec.kubeConfig``).  Only ``locationType: Secret`` is served: a
    ``Path`` would read files of kuota's own container, and ClusterProfiles
    are not implemented; both get a clear reason instead.
    """
    spec = objects.spec(cluster)
    source = spec.get("clusterSource") if isinstance(spec.get("clusterSource"), Mapping) else spec
    kubeconfig = source.get("kubeConfig") if isinstance(source, Mapping) else None
    if not isinstance(kubeconfig, Mapping):
        if isinstance(source, Mapping) and source.get("clusterProfileRef"):
            return KubeconfigProblem(
                "MultiKueueClusterProfileFeatureDisabled",
                "load client config failed: clusterProfileRef is not supported by kuota",
            )
        return KubeconfigProblem(
            BAD_KUBECONFIG, "load client config failed: kubeconfig reference is nil"
        )
    location = str(kubeconfig.get("location") or "")
    if str(kubeconfig.get("locationType") or "Secret") != "Secret":
        return KubeconfigProblem(
            BAD_KUBECONFIG,
            f"load client config failed: locationType Path ({location}) is not supported by "
            "kuota; put the kubeconfig in a Secret",
        )
    return location


def kubeconfig_of(
    cluster: Mapping[str, Any], secret: Mapping[str, Any] | None
) -> dict[str, Any] | KubeconfigProblem:
    """The worker's kubeconfig (parsed) from ``secret`` as read (None: not found): pure."""
    name = secret_name(cluster)
    if isinstance(name, KubeconfigProblem):
        return name
    if secret is None:
        return KubeconfigProblem(
            BAD_KUBECONFIG, f'load client config failed: secrets "{name}" not found'
        )
    data = secret.get("data")
    encoded = data.get(MULTIKUEUE_KUBECONFIG_KEY) if isinstance(data, Mapping) else None
    if not isinstance(encoded, str):
        return KubeconfigProblem(
            BAD_KUBECONFIG,
            f'load client config failed: key "{MULTIKUEUE_KUBECONFIG_KEY}" not found in '
            f'secret "{name}"',
        )
    try:
        parsed = yaml.safe_load(base64.b64decode(encoded, validate=True))
    except (binascii.Error, ValueError, yaml.YAMLError) as bad:
        return KubeconfigProblem(
            BAD_KUBECONFIG, f"load client config failed: the kubeconfig does not parse: {bad}"
        )
    problem = kubeconfig_problem(parsed)
    if problem is not None:
        return KubeconfigProblem(BAD_KUBECONFIG, f"load client config failed: {problem}")
    assert isinstance(parsed, dict)
    return parsed


def kubeconfig_problem(config: object) -> str | None:
    """What makes a kubeconfig unfit for a controller that reads it from a Secret: pure.

    As Kueue: no files of the manager's container (token, CA or certificate
    paths), no exec or auth-provider plugins, no disabled TLS verification,
    a server URL for each cluster.
    """
    if not isinstance(config, Mapping):
        return "the kubeconfig is not a mapping"
    clusters = config.get("clusters")
    if not isinstance(clusters, list) or not clusters:
        return "the kubeconfig has no clusters"
    for entry in clusters:
        cluster = entry.get("cluster") if isinstance(entry, Mapping) else None
        name = entry.get("name") if isinstance(entry, Mapping) else "?"
        if not isinstance(cluster, Mapping) or not cluster.get("server"):
            return f"server URL is required for cluster {name}"
        if cluster.get("insecure-skip-tls-verify"):
            return f"insecure TLS verification is not allowed for cluster {name}"
        if cluster.get("certificate-authority"):
            return (
                "certificate-authority file paths are not allowed, use "
                f"certificate-authority-data for cluster {name}"
            )
    for entry in config.get("users") or []:
        user = entry.get("user") if isinstance(entry, Mapping) else None
        if not isinstance(user, Mapping):
            continue
        if user.get("tokenFile"):
            return "tokenFile is not allowed"
        if user.get("exec"):
            return "exec plugins are not allowed"
        if user.get("auth-provider"):
            return "auth providers are not allowed"
        if user.get("client-certificate") or user.get("client-key"):
            return "client certificate file paths are not allowed, use the -data fields"
    return None


def cluster_condition(found: dict[str, Any] | KubeconfigProblem, probe: str | None) -> Condition:
    """The ``Active`` condition of a MultiKueueCluster: pure.

    ``probe`` is None when the worker answered an authenticated request for
    its Workloads, else what went wrong (only read when a kubeconfig was found).
    """
    if isinstance(found, KubeconfigProblem):
        return Condition(False, found.reason, found.message)
    if probe is not None:
        return Condition(False, CONNECTION_FAILED, probe)
    return Condition(True, ACTIVE_REASON, CONNECTED)


# --- 2. the AdmissionCheck ------------------------------------------------------------------


def config_name(check: Mapping[str, Any]) -> str:
    """The MultiKueueConfig an AdmissionCheck names (``""`` when none): pure."""
    parameters = objects.spec(check).get("parameters")
    return str(parameters.get("name") or "") if isinstance(parameters, Mapping) else ""


def admission_check_condition(
    check: Mapping[str, Any],
    configs: Mapping[str, Mapping[str, Any]],
    clusters: Mapping[str, Mapping[str, Any]],
) -> Condition:
    """The ``Active`` condition of a MultiKueue AdmissionCheck (Kueue's messages): pure."""
    parameters = objects.spec(check).get("parameters")
    problem: str | None = None
    if not isinstance(parameters, Mapping):
        problem = "missing parameters reference"
    elif not parameters.get("name"):
        problem = "empty name: bad parameters reference"
    elif parameters.get("apiGroup") != KUEUE_GROUP:
        problem = (
            f'wrong group "{parameters.get("apiGroup")}", expecting "{KUEUE_GROUP}": '
            "bad parameters reference"
        )
    elif parameters.get("kind") != "MultiKueueConfig":
        problem = (
            f'wrong kind "{parameters.get("kind")}", expecting "MultiKueueConfig": '
            "bad parameters reference"
        )
    elif str(parameters["name"]) not in configs:
        problem = f'multikueueconfigs.{KUEUE_GROUP} "{parameters["name"]}" not found'
    if problem is not None:
        return Condition(
            False, BAD_CONFIG, f"Cannot load the AdmissionChecks parameters: {problem}"
        )
    names = config_clusters(configs[config_name(check)])
    missing = [name for name in names if name not in clusters]
    inactive = [
        name for name in names if name in clusters and not objects.is_true(clusters[name], "Active")
    ]
    if not missing and not inactive:
        return Condition(True, ACTIVE_REASON, CHECK_ACTIVE_MESSAGE)
    parts = []
    if missing:
        parts.append(f"Missing clusters: [{' '.join(missing)}]")
    if inactive:
        parts.append(f"Inactive clusters: [{' '.join(inactive)}]")
    some = len(missing) + len(inactive) < len(names)
    return Condition(some, SOME_ACTIVE_CLUSTERS if some else NO_USABLE_CLUSTERS, ", ".join(parts))


def config_clusters(config: Mapping[str, Any]) -> list[str]:
    """The clusters a MultiKueueConfig lists, in its order: pure."""
    clusters = objects.spec(config).get("clusters")
    return [str(name) for name in clusters] if isinstance(clusters, list) else []


def is_multikueue_check(check: Mapping[str, Any]) -> bool:
    return objects.spec(check).get("controllerName") == MULTIKUEUE_CONTROLLER


# --- 3. dispatching a Workload --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Remote:
    """What one reachable worker holds of a Workload (only objects of this manager's origin)."""

    workload: Mapping[str, Any] | None = None
    job: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class CreateRemoteWorkload:
    cluster: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CreateRemoteJob:
    cluster: str
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DeleteRemote:
    """Delete the Workload and the Job of this Workload on ``cluster`` (whichever exist)."""

    cluster: str


@dataclass(frozen=True, slots=True)
class SyncJobStatus:
    """Replace the manager's Job ``status`` with the remote one's."""

    status: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SetCheck:
    """Set the Workload's MultiKueue check to ``state`` (and where it runs, when Ready)."""

    state: str
    message: str
    cluster_name: str | None = None


@dataclass(frozen=True, slots=True)
class Nominate:
    clusters: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClearNomination:
    """Remove ``status.clusterName`` and ``nominatedClusterNames``: the Workload is to be
    dispatched anew (Kueue clears both when it evicts)."""


@dataclass(frozen=True, slots=True)
class FinishLocal:
    reason: str
    message: str


Action = (
    CreateRemoteWorkload
    | CreateRemoteJob
    | DeleteRemote
    | SyncJobStatus
    | SetCheck
    | Nominate
    | ClearNomination
    | FinishLocal
)
"""Everything :func:`dispatch` may ask for; the controller performs each member."""


@dataclass(frozen=True, slots=True)
class DispatchInput:
    """Everything :func:`dispatch` reads about one manager Workload."""

    workload: Mapping[str, Any]
    check: str
    """The name of the Workload's MultiKueue admission check."""
    job: Mapping[str, Any] | None
    remotes: Mapping[str, Remote]
    """Per reachable worker of the check's config: what it holds."""
    unreachable: Sequence[str] = ()
    """Workers of the config that did not answer."""
    lost_since: Mapping[str, datetime] = field(default_factory=dict)
    now: datetime | None = None
    worker_lost_timeout: timedelta = DEFAULT_WORKER_LOST_TIMEOUT
    origin: str = DEFAULT_ORIGIN


def check_state(workload: Mapping[str, Any], check: str) -> Mapping[str, Any] | None:
    """The ``status.admissionChecks`` entry of ``check``, if the Workload has one: pure."""
    for entry in objects.status(workload).get("admissionChecks") or []:
        if isinstance(entry, Mapping) and entry.get("name") == check:
            return entry
    return None


def dispatch(given: DispatchInput) -> list[Action]:
    """The writes one manager Workload needs now (module docstring, a–e): pure."""
    workload = given.workload
    present = [name for name, remote in given.remotes.items() if remote.workload or remote.job]
    forget = _nominated(workload)
    if objects.is_finished(workload):
        return [DeleteRemote(name) for name in present]
    if not objects.has_quota_reservation(workload):
        return [DeleteRemote(name) for name in present] + forget
    if objects.is_evicting(workload):
        return _stop(given, present) + forget
    entry = check_state(workload, given.check) or {}
    state = str(entry.get("state") or "Pending")
    unsupported = unsupported_owner_kind(workload)
    if unsupported is not None:
        # Admitted as it is, the owner would run on the manager: refuse instead (Kueue's rule).
        if state != "Pending" or present:
            return [DeleteRemote(name) for name in present]
        return [SetCheck("Rejected", f'No multikueue adapter found for owner kind "{unsupported}"')]
    for remote in given.remotes.values():
        if remote.workload is not None and objects.is_true(remote.workload, FINISHED):
            finished = objects.condition(remote.workload, FINISHED) or {}
            if given.job is None:
                return [FinishLocal(str(finished.get("reason")), str(finished.get("message")))]
            if remote.job is not None and not _suspended(given.job):
                wanted = dict(objects.status(remote.job))
                if wanted != dict(objects.status(given.job)):
                    return [SyncJobStatus(wanted)]
            return []
    admitting = next(
        (
            name
            for name, remote in given.remotes.items()
            if remote.workload is not None and objects.is_true(remote.workload, ADMITTED)
        ),
        None,
    )
    if admitting is not None:
        return _converge(given, admitting, state)
    if state == "Ready":
        where = str(objects.status(workload).get("clusterName") or "")
        there = given.remotes.get(where, Remote()).workload
        if there is not None and objects.is_true(there, EVICTED):
            return [
                SetCheck(
                    "Retry",
                    f'Workload evicted on worker cluster: "{where}", resetting for '
                    f're-admission. Previously: "{state}"',
                )
            ]
        if where and where in given.unreachable:
            since = given.lost_since.get(where)
            if since is None or given.now is None or given.now - since < given.worker_lost_timeout:
                return []
            return [SetCheck("Retry", _previously(ADMITTING_REMOTE_LOST, state))]
        return [SetCheck("Retry", _previously(ADMITTING_REMOTE_GONE, state))]
    if state != "Pending":
        return []
    if objects.status(workload).get("clusterName"):
        return [ClearNomination()]  # left from an earlier dispatch: start again
    actions: list[Action] = [
        CreateRemoteWorkload(name, remote_workload(workload, given.origin))
        for name, remote in given.remotes.items()
        if remote.workload is None
    ]
    nominated = tuple(sorted(given.remotes))
    current = objects.status(workload).get("nominatedClusterNames") or []
    if nominated and sorted(current) != list(nominated):
        actions.append(Nominate(nominated))
    return actions


def _converge(given: DispatchInput, admitting: str, state: str) -> list[Action]:
    """A worker admitted the copy: keep only it, give it the Job, mark the check Ready."""
    actions: list[Action] = [
        DeleteRemote(name)
        for name, remote in given.remotes.items()
        if name != admitting and (remote.workload or remote.job)
    ]
    remote = given.remotes[admitting]
    if given.job is not None:
        if remote.job is None:
            actions.append(
                CreateRemoteJob(
                    admitting, remote_job(given.job, objects.name(given.workload), given.origin)
                )
            )
        elif not _suspended(given.job):
            wanted = dict(objects.status(remote.job))
            if wanted != dict(objects.status(given.job)):
                actions.append(SyncJobStatus(wanted))
    if state not in ("Ready", "Retry", "Rejected"):
        actions.append(
            SetCheck("Ready", f'The workload was admitted on "{admitting}"', cluster_name=admitting)
        )
    return actions


def _stop(given: DispatchInput, present: list[str]) -> list[Action]:
    """The manager evicts the Workload: the remote run ends, and the manager's Job says so.

    kuota gives the quota back once the (suspended) manager's Job has no
    active pods; its pods are the worker's, so the copied count is set to
    zero once the worker's objects are gone (Kueue suspends the remote Job
    and copies its status instead).
    """
    actions: list[Action] = [DeleteRemote(name) for name in present]
    job = given.job
    if job is not None and _suspended(job) and not present:
        status = dict(objects.status(job))
        if status.get("active") or status.get("ready") or status.get("terminating"):
            status.update(active=0, ready=0)
            status.pop("terminating", None)
            actions.append(SyncJobStatus(status))
    return actions


def _nominated(workload: Mapping[str, Any]) -> list[Action]:
    """A ClearNomination when the Workload still names where it was sent."""
    status = objects.status(workload)
    if status.get("clusterName") or status.get("nominatedClusterNames"):
        return [ClearNomination()]
    return []


def _previously(message: str, state: str) -> str:
    return f'{message}, Previously: "{state}"'


def _suspended(job: Mapping[str, Any]) -> bool:
    return objects.spec(job).get("suspend") is True


def _meta_for_creation(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Name, namespace, labels and annotations: what a copy on another cluster keeps."""
    kept: dict[str, Any] = {"name": objects.name(obj)}
    if objects.namespace(obj):
        kept["namespace"] = objects.namespace(obj)
    kept["labels"] = dict(objects.labels(obj))
    annotations = objects.annotations(obj)
    if annotations:
        kept["annotations"] = dict(annotations)
    return kept


def remote_workload(workload: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """The copy of a manager Workload created on a worker (no owner, no status): pure."""
    meta = _meta_for_creation(workload)
    meta["labels"].pop(JOB_UID_LABEL, None)
    meta["labels"][MULTIKUEUE_ORIGIN_LABEL] = origin
    return {
        "apiVersion": str(workload.get("apiVersion") or f"{KUEUE_GROUP}/v1beta2"),
        "kind": "Workload",
        "metadata": meta,
        "spec": copy.deepcopy(dict(objects.spec(workload))),
    }


def remote_job(job: Mapping[str, Any], workload_name: str, origin: str) -> dict[str, Any]:
    """The manager's Job as created on the worker that admitted it: pure.

    The worker's kuota finds the admitted copy through ``prebuilt-workload-name``
    instead of making a Workload; without ``managedBy`` the worker's batch Job
    controller runs it; the selector and the template's UID labels go, as the
    API server sets them again for the new Job.
    """
    meta = _meta_for_creation(job)
    meta["labels"][MULTIKUEUE_ORIGIN_LABEL] = origin
    meta["labels"][PREBUILT_WORKLOAD_KEY] = workload_name
    spec = copy.deepcopy(dict(objects.spec(job)))
    spec.pop("selector", None)
    spec.pop("managedBy", None)
    template = spec.get("template")
    template_meta = template.get("metadata") if isinstance(template, dict) else None
    labels = template_meta.get("labels") if isinstance(template_meta, dict) else None
    if isinstance(labels, dict):
        for key in TEMPLATE_LABELS_SET_BY_THE_API:
            labels.pop(key, None)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


def check_entries(
    workload: Mapping[str, Any], check: str, action: SetCheck, now: str
) -> list[dict[str, Any]]:
    """``status.admissionChecks`` with ``check`` set as ``action`` says: pure."""
    entries = [
        dict(e)
        for e in objects.status(workload).get("admissionChecks") or []
        if isinstance(e, Mapping)
    ]
    for entry in entries:
        if entry.get("name") == check:
            if entry.get("state") != action.state:
                entry["lastTransitionTime"] = now
            entry["state"] = action.state
            entry["message"] = action.message
            return entries
    entries.append(
        {"name": check, "state": action.state, "message": action.message, "lastTransitionTime": now}
    )
    return entries


def multikueue_check_of(
    workload: Mapping[str, Any], checks: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """The name of the Workload's MultiKueue admission check (``checks``: by name): pure."""
    for entry in objects.status(workload).get("admissionChecks") or []:
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if isinstance(name, str) and name in checks and is_multikueue_check(checks[name]):
            return name
    return None


def unsupported_owner_kind(workload: Mapping[str, Any]) -> str | None:
    """The kind of a controlling owner MultiKueue cannot dispatch, or None: pure.

    kuota's MultiKueue creates batch/v1 Jobs on workers; a Workload without
    an owner is dispatched as a Workload alone.  Any other owner (a JobSet, a
    Pod) would be started on the manager once the check is Ready, the
    opposite of what MultiKueue is for, so its check is ``Rejected`` with
    Kueue's message, e.g. ``jobset.x-k8s.io/v1alpha2, Kind=JobSet``.
    """
    ref = objects.controller_reference(workload)
    if ref is None:
        return None
    if _is_batch_job(ref):
        return None
    return f"{ref.get('apiVersion') or ''}, Kind={ref.get('kind') or ''}"


def _is_batch_job(ref: Mapping[str, Any]) -> bool:
    return ref.get("kind") == "Job" and objects.api_group(ref.get("apiVersion")) == "batch"


def owner_job_name(workload: Mapping[str, Any]) -> str | None:
    """The name of the batch Job that owns a manager Workload: pure."""
    for ref in objects.owner_references(workload):
        if _is_batch_job(ref):
            return str(ref.get("name") or "") or None
    return None


def is_ours(obj: Mapping[str, Any], origin: str) -> bool:
    """Whether a worker's object was made by this manager (origin label): pure."""
    return objects.label(obj, MULTIKUEUE_ORIGIN_LABEL) == origin
