"""MultiKueue's decisions, from objects as a user and the workers would have them."""

from __future__ import annotations

import base64
import copy
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from scheduler.jobs import BATCH_JOB
from scheduler.jobs.batchjob.multikueue import remote_job
from scheduler.multikueue.decisions import (
    INCREMENTAL_ROUND,
    ClearNomination,
    CreateRemoteJob,
    CreateRemoteWorkload,
    DeleteRemote,
    DispatchInput,
    External,
    FinishLocal,
    Incremental,
    KubeconfigProblem,
    Nominate,
    Remote,
    SetCheck,
    SyncJobStatus,
    admission_check_condition,
    check_entries,
    cluster_condition,
    dispatch,
    kubeconfig_of,
    remote_workload,
)
from tests.builders import admission_check, container, job, multikueue_cluster, workload

NOW = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)
KUBECONFIG: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [
        {
            "name": "w",
            "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority-data": "Q0E="},
        }
    ],
    "users": [{"name": "u", "user": {"token": "t"}}],
    "contexts": [{"name": "w", "context": {"cluster": "w", "user": "u"}}],
    "current-context": "w",
}


def secret(config: object = KUBECONFIG, key: str = "kubeconfig") -> dict[str, Any]:
    text = yaml.safe_dump(config).encode()
    return {"data": {key: base64.b64encode(text).decode()}}


def test_a_missing_secret_says_so() -> None:
    found = kubeconfig_of(
        multikueue_cluster("onprem-worker").kubeconfig_secret("onprem-worker-secret").build(), None
    )
    condition = cluster_condition(found, None)
    assert not condition.status
    assert condition.reason == "BadKubeConfig"
    assert condition.message == (
        'load client config failed: secrets "onprem-worker-secret" not found'
    )


def test_a_secret_without_the_key_or_with_garbage_is_a_bad_kubeconfig() -> None:
    missing = kubeconfig_of(
        multikueue_cluster("onprem-worker").kubeconfig_secret("onprem-worker-secret").build(),
        secret(key="config"),
    )
    assert isinstance(missing, KubeconfigProblem)
    assert 'key "kubeconfig" not found in secret "onprem-worker-secret"' in missing.message
    garbage = kubeconfig_of(
        multikueue_cluster("onprem-worker").kubeconfig_secret("onprem-worker-secret").build(),
        {"data": {"kubeconfig": "!!!"}},
    )
    assert isinstance(garbage, KubeconfigProblem) and garbage.reason == "BadKubeConfig"


def test_kubeconfigs_that_reach_into_the_managers_files_are_refused() -> None:
    for change, words in [
        ({"tokenFile": "/var/run/token"}, "tokenFile is not allowed"),
        ({"exec": {"command": "aws"}}, "exec plugins are not allowed"),
    ]:
        config = copy.deepcopy(KUBECONFIG)
        config["users"][0]["user"].update(change)
        found = kubeconfig_of(
            multikueue_cluster("onprem-worker").kubeconfig_secret("onprem-worker-secret").build(),
            secret(config),
        )
        assert isinstance(found, KubeconfigProblem) and words in found.message
    insecure = copy.deepcopy(KUBECONFIG)
    insecure["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
    found = kubeconfig_of(
        multikueue_cluster("onprem-worker").kubeconfig_secret("onprem-worker-secret").build(),
        secret(insecure),
    )
    assert isinstance(found, KubeconfigProblem)
    assert "insecure TLS verification is not allowed for cluster w" in found.message


def test_a_reachable_worker_is_connected_and_an_unreachable_one_says_why() -> None:
    found = kubeconfig_of(
        multikueue_cluster("onprem-worker").kubeconfig_secret("onprem-worker-secret").build(),
        secret(),
    )
    assert found == KUBECONFIG
    connected = cluster_condition(found, None)
    assert (connected.status, connected.reason, connected.message) == (True, "Active", "Connected")
    refused = cluster_condition(found, "GET /apis/...: ClientConnectorError: refused")
    assert (refused.status, refused.reason) == (False, "ClientConnectionFailed")
    assert "refused" in refused.message


CONFIGS = {
    "multikueue-config": {"spec": {"clusters": ["onprem-worker", "cloud-worker"]}},
}


def test_the_check_is_active_when_every_cluster_of_its_config_is() -> None:
    both = {
        n: multikueue_cluster(n)
        .kubeconfig_secret(f"{n}-secret")
        .condition("Active", True, reason=None, message=None, at=None)
        .build()
        for n in ("onprem-worker", "cloud-worker")
    }
    condition = admission_check_condition(
        admission_check("multikueue-check").multikueue("multikueue-config").listed(), CONFIGS, both
    )
    assert (condition.status, condition.reason, condition.message) == (
        True,
        "Active",
        "The admission check is active",
    )
    one = {
        "onprem-worker": multikueue_cluster("onprem-worker")
        .kubeconfig_secret("onprem-worker-secret")
        .condition("Active", True, reason=None, message=None, at=None)
        .build()
    }
    some = admission_check_condition(
        admission_check("multikueue-check").multikueue("multikueue-config").listed(), CONFIGS, one
    )
    assert (some.status, some.reason, some.message) == (
        True,
        "SomeActiveClusters",
        "Missing clusters: [cloud-worker]",
    )
    none = {
        n: multikueue_cluster(n)
        .kubeconfig_secret(f"{n}-secret")
        .condition("Active", False, reason=None, message=None, at=None)
        .build()
        for n in ("onprem-worker", "cloud-worker")
    }
    down = admission_check_condition(
        admission_check("multikueue-check").multikueue("multikueue-config").listed(), CONFIGS, none
    )
    assert (down.status, down.reason) == (False, "NoUsableClusters")
    assert down.message == "Inactive clusters: [onprem-worker cloud-worker]"


def test_a_check_whose_config_is_missing_or_misnamed_is_bad_config() -> None:
    missing = admission_check_condition(
        admission_check("multikueue-check").multikueue("multikueue-config").listed(), {}, {}
    )
    assert (missing.status, missing.reason) == (False, "BadConfig")
    assert missing.message == (
        "Cannot load the AdmissionChecks parameters: "
        'multikueueconfigs.kueue.x-k8s.io "multikueue-config" not found'
    )
    wrong = admission_check_condition(
        admission_check("multikueue-check")
        .multikueue("multikueue-config")
        .parameters("ProvisioningRequestConfig", "x")
        .listed(),
        CONFIGS,
        {},
    )
    assert 'wrong kind "ProvisioningRequestConfig"' in wrong.message


# --- dispatch -------------------------------------------------------------------------------


def sample_workload() -> workload:
    """The manager's Workload of Job ``sample``, holding quota in ``cluster-queue``."""
    return (
        workload("job-sample-abc12")
        .uid("wl-uid")
        .created(None)
        .resource_version(7)
        .owned_by_job("sample", "job-uid")
        .queue("user-queue")
        .pod_sets({"name": "main", "count": 1})
        .condition("QuotaReserved", message=None, at=None)
        .status(admission={"clusterQueue": "cluster-queue"})
    )


def sample_job() -> job:
    """The manager's copy of Job ``sample`` (queue ``user-queue``), suspended, managed by
    MultiKueue."""
    return (
        job("sample")
        .uid("job-uid")
        .resource_version(3)
        .queue("user-queue")
        .parallelism(None)
        .completions(None)
        .spec(
            managedBy="kueue.x-k8s.io/multikueue",
            selector={"matchLabels": {"batch.kubernetes.io/controller-uid": "job-uid"}},
        )
        .template_labels(
            {
                "batch.kubernetes.io/controller-uid": "job-uid",
                "controller-uid": "job-uid",
                "job-name": "sample",
            }
        )
        .containers(container(image="i", resources=False))
        .unset("spec.template.spec.restartPolicy")
        .status()
    )


DONE: dict[str, Any] = {"reason": "Succeeded", "message": "done", "at": None}


def remote_copy() -> workload:
    """The worker's copy of the Workload as the dispatcher reads it: no spec, no condition."""
    return workload("job-sample-abc12").as_written().unset("spec").status(conditions=[])


def given(
    workload: dict[str, Any], job: dict[str, Any] | None = None, **remotes: Remote
) -> DispatchInput:
    return DispatchInput(
        workload=workload,
        check="multikueue-check",
        job=job if job is not None else sample_job().build(),
        adapter=BATCH_JOB,
        remotes=remotes,
        now=NOW,
    )


def test_a_pending_check_puts_a_copy_on_every_active_worker_and_nominates_them() -> None:
    actions = dispatch(
        given(
            sample_workload().admission_check("multikueue-check", "Pending", "").build(),
            onprem=Remote(),
            cloud=Remote(),
        )
    )
    created = [a for a in actions if isinstance(a, CreateRemoteWorkload)]
    assert [a.cluster for a in created] == ["onprem", "cloud"]
    body = created[0].body
    assert body["metadata"]["labels"] == {"kueue.x-k8s.io/multikueue-origin": "multikueue"}
    assert "ownerReferences" not in body["metadata"] and "status" not in body
    assert (
        body["spec"]
        == sample_workload().admission_check("multikueue-check", "Pending", "").build()["spec"]
    )
    assert Nominate(("cloud", "onprem")) in actions


def test_a_workload_of_a_kind_multikueue_cannot_run_remotely_is_rejected_not_run_here() -> None:
    workload = sample_workload().admission_check("multikueue-check", "Pending", "").build()
    workload["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "sample",
            "uid": "sts-uid",
            "controller": True,
        }
    ]
    assert dispatch(given(workload, onprem=Remote(), cloud=Remote())) == [
        SetCheck(
            "Rejected",
            'No multikueue adapter found for owner kind "apps/v1, Kind=StatefulSet"',
        )
    ]
    # a copy left from before is removed, and nothing is decided again once rejected
    rejected = copy.deepcopy(workload)
    rejected["status"]["admissionChecks"][0]["state"] = "Rejected"
    assert dispatch(
        given(rejected, onprem=Remote(workload=remote_copy().listed()), cloud=Remote())
    ) == [DeleteRemote("onprem")]
    assert dispatch(given(rejected, onprem=Remote(), cloud=Remote())) == []


def test_a_batch_job_owner_marked_controller_is_dispatched() -> None:
    workload = sample_workload().admission_check("multikueue-check", "Pending", "").build()
    workload["metadata"]["ownerReferences"][0]["controller"] = True
    actions = dispatch(given(workload, onprem=Remote()))
    assert [type(a) for a in actions] == [CreateRemoteWorkload, Nominate]


def test_without_quota_nothing_is_dispatched_and_copies_are_removed() -> None:
    workload = (
        sample_workload()
        .unset("status.admission")
        .status(conditions=[])
        .admission_check("multikueue-check", "Pending", "")
        .build()
    )
    assert dispatch(given(workload, onprem=Remote(), cloud=Remote())) == []
    assert dispatch(
        given(workload, onprem=Remote(workload=remote_copy().listed()), cloud=Remote())
    ) == [DeleteRemote("onprem")]


def test_the_worker_that_admits_gets_the_job_and_the_others_lose_their_copies() -> None:
    actions = dispatch(
        given(
            sample_workload().admission_check("multikueue-check", "Pending", "").build(),
            onprem=Remote(workload=remote_copy().listed()),
            cloud=Remote(
                workload=remote_copy()
                .condition("QuotaReserved", **DONE)
                .condition("Admitted", **DONE)
                .listed()
            ),
        )
    )
    assert actions[0] == DeleteRemote("onprem")
    assert isinstance(actions[1], CreateRemoteJob) and actions[1].cluster == "cloud"
    job = actions[1].body
    assert job["metadata"]["labels"] == {
        "kueue.x-k8s.io/queue-name": "user-queue",
        "kueue.x-k8s.io/multikueue-origin": "multikueue",
        "kueue.x-k8s.io/prebuilt-workload-name": "job-sample-abc12",
    }
    assert "managedBy" not in job["spec"] and "selector" not in job["spec"]
    assert job["spec"]["template"]["metadata"]["labels"] == {"job-name": "sample"}
    assert actions[2] == SetCheck(
        "Ready", 'The workload was admitted on "cloud"', cluster_name="cloud"
    )


def test_the_running_remote_jobs_status_is_copied_to_the_unsuspended_manager_job() -> None:
    running = {"active": 1, "startTime": "2026-11-25T21:00:00Z"}
    remote_job_obj = {"metadata": {"name": "sample"}, "status": running}
    both = Remote(workload=remote_copy().condition("Admitted", **DONE).listed(), job=remote_job_obj)
    ready = sample_workload().admission_check("multikueue-check", "Ready", "").build()
    assert dispatch(given(ready, sample_job().suspend(False).build(), cloud=both)) == [
        SyncJobStatus(running)
    ]
    assert dispatch(given(ready, sample_job().build(), cloud=both)) == [], (
        "a suspended manager Job is not given the status of a running one"
    )
    synced = sample_job().suspend(False).status(**running).build()
    assert dispatch(given(ready, synced, cloud=both)) == []


def test_a_finished_remote_finishes_the_manager_job_then_its_workload() -> None:
    done = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    finished = Remote(
        workload=remote_copy().condition("Admitted", **DONE).condition("Finished", **DONE).listed(),
        job={"status": done},
    )
    ready = sample_workload().admission_check("multikueue-check", "Ready", "").build()
    assert dispatch(given(ready, sample_job().suspend(False).build(), cloud=finished)) == [
        SyncJobStatus(done)
    ]
    no_job = DispatchInput(
        workload=ready, check="multikueue-check", job=None, remotes={"cloud": finished}
    )
    assert dispatch(no_job) == [FinishLocal("Succeeded", "done")]
    over = copy.deepcopy(ready)
    over["status"]["conditions"].append({"type": "Finished", "status": "True"})
    assert dispatch(given(over, cloud=finished)) == [DeleteRemote("cloud")]


def test_a_lost_worker_is_waited_for_then_the_check_retries() -> None:
    ready = sample_workload().admission_check("multikueue-check", "Ready", "").build()
    ready["status"]["clusterName"] = "cloud"

    def lost_for(minutes: int) -> list[Any]:
        return dispatch(
            DispatchInput(
                workload=ready,
                check="multikueue-check",
                job=sample_job().suspend(False).build(),
                adapter=BATCH_JOB,
                remotes={"onprem": Remote()},
                unreachable=["cloud"],
                lost_since={"cloud": NOW - timedelta(minutes=minutes)},
                now=NOW,
                worker_lost_timeout=timedelta(minutes=15),
            )
        )

    assert lost_for(14) == []
    assert lost_for(15) == [SetCheck("Retry", 'Admitting remote lost, Previously: "Ready"')]
    gone = dispatch(given(ready, cloud=Remote(), onprem=Remote()))
    assert gone == [SetCheck("Retry", 'Admitting remote no longer exists, Previously: "Ready"')]


def test_the_check_entry_is_replaced_in_place() -> None:
    workload = sample_workload().admission_check("multikueue-check", "Pending", "").build()
    entries = check_entries(workload, "multikueue-check", SetCheck("Ready", "ok"), "T")
    assert entries == [
        {"name": "multikueue-check", "state": "Ready", "message": "ok", "lastTransitionTime": "T"}
    ]


def test_copies_keep_what_a_worker_needs_and_nothing_of_the_manager() -> None:
    body = remote_workload(
        sample_workload().admission_check("multikueue-check", "Pending", "").build(), "mgr"
    )
    assert body["metadata"] == {
        "name": "job-sample-abc12",
        "namespace": "default",
        "labels": {"kueue.x-k8s.io/multikueue-origin": "mgr"},
    }
    job = remote_job(sample_job().build(), "job-sample-abc12", "mgr")
    assert job["metadata"]["name"] == "sample" and job["spec"]["suspend"] is True


def test_an_evicted_workload_stops_the_remote_run_and_frees_the_manager_job() -> None:
    evicted = sample_workload().admission_check("multikueue-check", "Retry", "").build()
    evicted["status"]["conditions"].append({"type": "Evicted", "status": "True"})
    running = {"active": 3, "ready": 3, "startTime": "2026-11-25T21:00:00Z"}
    remote_run = Remote(
        workload=remote_copy().condition("Admitted", **DONE).listed(), job={"status": running}
    )
    assert dispatch(
        given(evicted, sample_job().suspend(False).status(**running).build(), cloud=remote_run)
    ) == [DeleteRemote("cloud")]
    stopped = sample_job().status(**running).build()
    assert dispatch(given(evicted, stopped, cloud=Remote())) == [
        SyncJobStatus({"active": 0, "ready": 0, "startTime": "2026-11-25T21:00:00Z"})
    ]
    idle = sample_job().status(active=0).build()
    assert dispatch(given(evicted, idle, cloud=Remote())) == []


def test_an_evicted_or_released_workload_forgets_where_it_was_sent() -> None:
    sent = sample_workload().admission_check("multikueue-check", "Pending", "").build()
    sent["status"]["clusterName"] = "cloud"
    assert dispatch(given(sent, cloud=Remote(), onprem=Remote())) == [ClearNomination()], (
        "a requeued Workload is dispatched anew, clusterName first removed"
    )
    evicted = sample_workload().admission_check("multikueue-check", "Retry", "").build()
    evicted["status"]["conditions"].append({"type": "Evicted", "status": "True"})
    evicted["status"]["nominatedClusterNames"] = ["cloud", "onprem"]
    assert dispatch(given(evicted, cloud=Remote())) == [ClearNomination()]
    released = (
        sample_workload()
        .unset("status.admission")
        .status(conditions=[])
        .admission_check("multikueue-check", "Pending", "")
        .build()
    )
    released["status"]["clusterName"] = "cloud"
    assert dispatch(given(released, cloud=Remote(workload=remote_copy().listed()))) == [
        DeleteRemote("cloud"),
        ClearNomination(),
    ]
    done = copy.deepcopy(released)
    done["status"]["conditions"].append({"type": "Finished", "status": "True"})
    assert dispatch(given(done, cloud=Remote())) == [], "a finished one keeps where it ran"


def test_a_workload_evicted_on_its_worker_is_reset_for_readmission() -> None:
    ready = sample_workload().admission_check("multikueue-check", "Ready", "").build()
    ready["status"]["clusterName"] = "cloud"
    preempted = remote_copy().listed()
    preempted["status"]["conditions"] = [{"type": "Evicted", "status": "True"}]
    assert dispatch(given(ready, cloud=Remote(workload=preempted))) == [
        SetCheck(
            "Retry",
            'Workload evicted on worker cluster: "cloud", resetting for re-admission. '
            'Previously: "Ready"',
        )
    ]


MEMBERS = ("w5", "w1", "w4", "w2", "w3")


def nominated(*names: str) -> dict[str, Any]:
    """The Pending Workload, with ``status.nominatedClusterNames`` when ``names``."""
    built = sample_workload().admission_check("multikueue-check", "Pending", "")
    if names:
        built = built.status(nominatedClusterNames=list(names))
    return built.build()


def incremental(workload: dict[str, Any], started: datetime | None, **kwargs: Any) -> list[Any]:
    reachable = {name: Remote() for name in MEMBERS if name != "w4"}  # w4 does not answer
    return dispatch(
        replace(
            given(workload, **reachable),
            dispatching=Incremental(step=2, members=MEMBERS, round_started=started, **kwargs),
        )
    )


def created_on(actions: list[Any]) -> list[str]:
    return [a.cluster for a in actions if isinstance(a, CreateRemoteWorkload)]


def test_the_incremental_dispatcher_nominates_step_size_workers_in_the_configs_order() -> None:
    actions = incremental(nominated(), None)
    assert actions[0] == Nominate(("w5", "w1"), new_round=True)
    assert created_on(actions) == ["w5", "w1"], "only the nominated get a copy"


def test_during_a_round_nothing_more_is_nominated() -> None:
    actions = incremental(nominated("w5", "w1"), NOW - INCREMENTAL_ROUND + timedelta(seconds=1))
    assert not [a for a in actions if isinstance(a, Nominate)]
    assert created_on(actions) == ["w5", "w1"], "copies missing on nominated workers are made"


def test_a_round_without_admission_adds_the_next_workers() -> None:
    actions = incremental(nominated("w5", "w1"), NOW - INCREMENTAL_ROUND - timedelta(seconds=1))
    assert actions[0] == Nominate(("w5", "w1", "w4", "w2"), new_round=True)
    assert created_on(actions) == ["w5", "w1", "w2"], "w4 is nominated, unreachable: no copy yet"
    last = incremental(nominated(*MEMBERS[:4]), NOW - timedelta(hours=1))
    assert last[0] == Nominate(MEMBERS, new_round=True), "fewer left than the step: all of them"
    assert not [a for a in incremental(nominated(*MEMBERS), None) if isinstance(a, Nominate)]


def test_without_the_config_order_the_workers_are_nominated_alphabetically() -> None:
    actions = incremental(nominated(), None, in_config_order=False)
    assert actions[0] == Nominate(("w1", "w2"), new_round=True)


def test_an_external_dispatcher_nominates_and_kuota_copies_there_only() -> None:
    workload = nominated("cloud")
    remotes = {"onprem": Remote(workload=remote_copy().build()), "cloud": Remote()}
    actions = dispatch(replace(given(workload, **remotes), dispatching=External()))
    assert actions == [
        DeleteRemote("onprem"),
        CreateRemoteWorkload("cloud", remote_workload(workload, "multikueue")),
    ]
    assert dispatch(replace(given(nominated(), **remotes), dispatching=External())) == [
        DeleteRemote("onprem")
    ], "nothing nominated yet: no copy anywhere"
