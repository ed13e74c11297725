"""MultiKueue across three real local clusters: a manager and two workers.

Each cluster is its own control plane on loopback ports with kuota (webhook
and scheduler) installed, started as a user would (``python -m e2e.cluster
--name X up --kuota``; the manager with ``--multikueue``, which also runs
``kuota-multikueue`` with the chart's RBAC).  The manager gets seed 003's
MultiKueue objects verbatim; the workers get the same ClusterQueue and
LocalQueue without the check (seed 003: "Mirror the namespace and queue
configuration across all clusters").  The workers' Secrets hold their admin
kubeconfigs.  Every cluster runs the real JobSet controller, so a JobSet is
dispatched as a Job is.

Expensive (three clusters): run this file alone.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.cluster.controlplane import read_state, recorded_processes
from e2e.cluster.processes import stop
from e2e.cluster.tools import ToolPaths
from e2e.kuota_multikueue import (
    Kubectl,
    NamedCluster,
    active,
    start_multikueue,
    start_named_clusters,
    stop_named_clusters,
    wait_for,
    worker_secret,
)

DATA = Path(__file__).resolve().parent / "data"
MANAGER_SETUP = DATA / "multikueue" / "manager-setup.yaml"
WORKER_SETUP = DATA / "single-clusterqueue-setup.yaml"
SAMPLE_JOB = DATA / "multikueue" / "sample-job.yaml"
pytestmark = pytest.mark.cluster
NAMES = ["mk-manager", "mk-onprem", "mk-cloud"]
WORKERS = {"onprem-worker": "mk-onprem", "cloud-worker": "mk-cloud"}
CONNECTED = ("True", "Active", "Connected")


@pytest.fixture(scope="module")
def clusters() -> Iterator[dict[str, NamedCluster]]:
    root = Path(tempfile.mkdtemp(prefix="kuota-multikueue-"))
    # Every cluster runs the real JobSet controller: the manager's leaves a JobSet
    # handed to MultiKueue alone (managedBy), the workers' run the copies.
    extra = {name: ["--jobset"] for name in NAMES}
    extra["mk-manager"].append("--multikueue")
    started = start_named_clusters(root, NAMES, extra=extra)
    try:
        yield {cluster.name: cluster for cluster in started}
    finally:
        stop_named_clusters(root, NAMES)


@pytest.fixture(scope="module")
def kubectl(clusters: dict[str, NamedCluster]) -> dict[str, Kubectl]:
    binary = ToolPaths.resolve(build_if_missing=False).binary("kubectl")
    return {name: Kubectl(binary, cluster.kubeconfig) for name, cluster in clusters.items()}


@pytest.fixture(autouse=True)
def manager_jobs_removed(kubectl: dict[str, Kubectl]) -> Iterator[None]:
    """Each test's Jobs on the manager go when it ends, so their quota is free again."""
    yield
    kubectl["mk-manager"].run(
        "delete", "jobs", "--all", "-n", "default", "--cascade=background", check=False
    )


def _connect_workers(clusters: dict[str, NamedCluster], kubectl: dict[str, Kubectl]) -> None:
    manager = kubectl["mk-manager"]
    for cluster_name, worker in WORKERS.items():
        kubectl[worker].apply(WORKER_SETUP.read_text())
        manager.apply([worker_secret(f"{cluster_name}-secret", clusters[worker].kubeconfig)])


@pytest.fixture
def workers_connected(clusters: dict[str, NamedCluster], kubectl: dict[str, Kubectl]) -> None:
    """Both workers' Secrets on the manager and both connected.

    The first test connects them as seed 003 shows; the later tests ask for
    this again so that a failure of the first does not fail them all.
    """
    manager = kubectl["mk-manager"]
    if all(active(manager.json("multikueuecluster", name)) == CONNECTED for name in WORKERS):
        return
    _connect_workers(clusters, kubectl)
    for name in WORKERS:
        wait_for(
            lambda name=name: active(manager.json("multikueuecluster", name)),  # type: ignore[misc]
            lambda seen: seen == CONNECTED,
            timeout=60,
            what=f"{name} connected",
        )


def test_seed_003_reports_a_missing_secret_then_connected(
    clusters: dict[str, NamedCluster], kubectl: dict[str, Kubectl]
) -> None:
    manager = kubectl["mk-manager"]
    manager.apply(MANAGER_SETUP.read_text())
    missing = wait_for(
        lambda: active(manager.json("multikueuecluster", "onprem-worker")),
        lambda seen: seen is not None,
        timeout=30,
        what="the Active condition of onprem-worker",
    )
    assert missing == (
        "False",
        "BadKubeConfig",
        'load client config failed: secrets "onprem-worker-secret" not found',
    )
    # Until the controller has seen both clusters it may say less (they are
    # applied after the check); what a user reads once it has is this.
    wait_for(
        lambda: active(manager.json("admissioncheck", "multikueue-check")),
        lambda seen: (
            seen == ("False", "NoUsableClusters", "Inactive clusters: [onprem-worker cloud-worker]")
        ),
        timeout=30,
        what="multikueue-check inactive, naming both clusters",
    )

    _connect_workers(clusters, kubectl)
    for name in WORKERS:
        connected = wait_for(
            lambda name=name: active(manager.json("multikueuecluster", name)),  # type: ignore[misc]
            lambda seen: seen is not None and seen[0] == "True",
            timeout=30,
            what=f"{name} connected",
        )
        assert connected == ("True", "Active", "Connected")
    # What seed 003 shows a user.
    printed = manager.run(
        "get",
        "multikueuecluster",
        "onprem-worker",
        "-o",
        "jsonpath={.status.conditions[?(@.type=='Active')].message}",
    )
    assert printed == "Connected"
    assert wait_for(
        lambda: active(manager.json("admissioncheck", "multikueue-check")),
        lambda seen: seen is not None and seen[0] == "True",
        timeout=30,
        what="multikueue-check active",
    ) == ("True", "Active", "The admission check is active")
    status = subprocess.run(
        [sys.executable, "-m", "scheduler.cli.main", "status", "--kubeconfig"]
        + [str(clusters["mk-manager"].kubeconfig)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "  onprem-worker  connected True: Connected\n" in status, status
    assert "  admission check multikueue-check: kueue.x-k8s.io/multikueue, Active\n" in status
    assert wait_for(
        lambda: manager.run(
            "get",
            "clusterqueues",
            "cluster-queue",
            "-o",
            "jsonpath={.status.conditions[?(@.type=='Active')].message}",
        ),
        lambda seen: seen == "Can admit new workloads",
        timeout=30,
        what="cluster-queue active",
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_worker_says_why(
    clusters: dict[str, NamedCluster], kubectl: dict[str, Kubectl], tmp_path: Path
) -> None:
    manager = kubectl["mk-manager"]
    config = yaml.safe_load(clusters["mk-onprem"].kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{_free_port()}"
    dead = tmp_path / "dead.kubeconfig"
    dead.write_text(yaml.safe_dump(config))
    manager.apply(
        [
            worker_secret("gone-worker-secret", dead),
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "MultiKueueCluster",
                "metadata": {"name": "gone-worker"},
                "spec": {
                    "clusterSource": {
                        "kubeConfig": {"locationType": "Secret", "location": "gone-worker-secret"}
                    }
                },
            },
        ]
    )
    status, reason, message = wait_for(
        lambda: active(manager.json("multikueuecluster", "gone-worker")),
        lambda seen: seen is not None,
        timeout=30,
        what="gone-worker's Active condition",
    ) or ("", "", "")
    assert (status, reason) == ("False", "ClientConnectionFailed")
    assert "127.0.0.1" in message, message
    manager.run("delete", "multikueuecluster", "gone-worker")


def _submit(manager: Kubectl, name: str, delay: str = "15s") -> dict[str, Any]:
    job = yaml.safe_load(SAMPLE_JOB.read_text())
    job["metadata"]["name"] = name
    job["spec"]["template"]["metadata"]["annotations"]["pod-complete.stage.kwok.x-k8s.io/delay"] = (
        delay
    )
    manager.apply([job])
    created: dict[str, Any] = manager.json("job", name, "-n", "default")
    return created


def _manager_workload(manager: Kubectl, job: dict[str, Any]) -> dict[str, Any]:
    uid = job["metadata"]["uid"]
    found = manager.json("workloads", "-n", "default", "-l", f"kueue.x-k8s.io/job-uid={uid}")
    items = found.get("items") or []
    return items[0] if items else {}


def _dispatched(manager: Kubectl, job: dict[str, Any], what: str) -> dict[str, Any]:
    """The manager's Workload of ``job`` once MultiKueue dispatched it (``status.clusterName``)."""
    found: dict[str, Any] = wait_for(
        lambda: _manager_workload(manager, job),
        lambda w: bool((w.get("status") or {}).get("clusterName")),
        timeout=60,
        what=what,
    )
    return found


def _needs_two_phase_admission(manager: Kubectl, job: dict[str, Any]) -> dict[str, Any]:
    """The manager's Workload once it has quota; skips if the scheduler admits without checks."""
    workload = wait_for(
        lambda: _manager_workload(manager, job),
        lambda w: any(
            c.get("type") == "QuotaReserved" and c.get("status") == "True"
            for c in (w.get("status") or {}).get("conditions") or []
        ),
        timeout=60,
        what="quota reserved on the manager",
    )
    if not (workload.get("status") or {}).get("admissionChecks"):
        pytest.skip(
            "this scheduler admits without admission checks (two-phase admission, branch "
            "checks, is not merged): nothing waits for MultiKueue"
        )
    return workload


def _pods(cluster: Kubectl, job_name: str) -> list[dict[str, Any]]:
    found = cluster.json("pods", "-n", "default", "-l", f"job-name={job_name}")
    return list(found.get("items") or [])


@pytest.mark.usefixtures("workers_connected")
def test_a_job_submitted_once_runs_on_a_worker_and_finishes_on_the_manager(
    clusters: dict[str, NamedCluster], kubectl: dict[str, Kubectl]
) -> None:
    manager = kubectl["mk-manager"]
    job = _submit(manager, "mk-once")
    assert job["spec"].get("managedBy") == "kueue.x-k8s.io/multikueue", (
        "the manager's webhook hands the Job to MultiKueue"
    )
    _needs_two_phase_admission(manager, job)
    workload = _dispatched(manager, job, "the manager's Workload dispatched")
    where = workload["status"]["clusterName"]
    (check,) = workload["status"]["admissionChecks"]
    assert (
        check["state"] == "Ready" and check["message"] == f'The workload was admitted on "{where}"'
    )
    worker = kubectl[WORKERS[where]]
    running = wait_for(
        lambda: _pods(worker, "mk-once"),
        lambda pods: len(pods) == 3,
        timeout=60,
        what=f"the Job's pods on {where}",
    )
    assert len(running) == 3
    assert _pods(manager, "mk-once") == [], "nothing runs on the manager"
    other = kubectl[next(c for n, c in WORKERS.items() if n != where)]
    assert wait_for(
        lambda: other.json("workloads", "-n", "default").get("items"),
        lambda items: not items,
        timeout=30,
        what="the copy on the other worker deleted",
    ) in ([], None)
    synced = wait_for(
        lambda: manager.json("job", "mk-once", "-n", "default"),
        lambda j: (j.get("status") or {}).get("succeeded") == 3,
        timeout=90,
        what="the remote Job's completion on the manager's Job",
    )
    assert any(
        c["type"] == "Complete" and c["status"] == "True" for c in synced["status"]["conditions"]
    )
    finished = wait_for(
        lambda: _manager_workload(manager, job),
        lambda w: any(
            c.get("type") == "Finished" and c.get("status") == "True"
            for c in (w.get("status") or {}).get("conditions") or []
        ),
        timeout=30,
        what="the manager's Workload finished",
    )
    assert finished
    wait_for(
        lambda: worker.json("jobs", "-n", "default").get("items"),
        lambda items: not items,
        timeout=30,
        what="the remote Job deleted once finished",
    )


def _jobset(name: str) -> dict[str, Any]:
    """A queued JobSet of one replicated job of two pods, each done after 10 s (kwok)."""
    pod = {
        "metadata": {"annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "10s"}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                    "args": ["entrypoint-tester"],
                    "resources": {"requests": {"cpu": "1", "memory": "200Mi"}},
                }
            ],
        },
    }
    job = {"parallelism": 2, "completions": 2, "backoffLimit": 0, "template": pod}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
        },
        "spec": {"replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": job}}]},
    }


def _jobset_pods(cluster: Kubectl, name: str) -> list[dict[str, Any]]:
    found = cluster.json("pods", "-n", "default", "-l", f"jobset.sigs.k8s.io/jobset-name={name}")
    return list(found.get("items") or [])


@pytest.mark.usefixtures("workers_connected")
def test_a_jobset_runs_on_a_worker_and_finishes_on_the_manager(
    kubectl: dict[str, Kubectl],
) -> None:
    manager = kubectl["mk-manager"]
    manager.apply([_jobset("mk-jobset")])
    try:
        jobset = manager.json("jobset", "mk-jobset", "-n", "default")
        assert jobset["spec"].get("managedBy") == "kueue.x-k8s.io/multikueue", (
            "the manager's webhook hands the JobSet to MultiKueue"
        )
        _needs_two_phase_admission(manager, jobset)
        workload = _dispatched(manager, jobset, "the manager's Workload of the JobSet dispatched")
        where = workload["status"]["clusterName"]
        worker = kubectl[WORKERS[where]]
        remote = worker.json("jobset", "mk-jobset", "-n", "default")
        assert "managedBy" not in remote["spec"], "the worker's JobSet controller runs the copy"
        assert (
            remote["metadata"]["labels"]["kueue.x-k8s.io/prebuilt-workload-name"]
            == (workload["metadata"]["name"])
        )
        wait_for(
            lambda: _jobset_pods(worker, "mk-jobset"),
            lambda pods: len(pods) == 2,
            timeout=60,
            what=f"the JobSet's pods on {where}",
        )
        assert _jobset_pods(manager, "mk-jobset") == [], "nothing runs on the manager"
        synced = wait_for(
            lambda: manager.json("jobset", "mk-jobset", "-n", "default"),
            lambda j: (j.get("status") or {}).get("terminalState") == "Completed",
            timeout=90,
            what="the remote JobSet's completion on the manager's JobSet",
        )
        assert any(
            c["type"] == "Completed" and c["status"] == "True"
            for c in synced["status"]["conditions"]
        )
        wait_for(
            lambda: _manager_workload(manager, jobset),
            lambda w: any(
                c.get("type") == "Finished" and c.get("status") == "True"
                for c in (w.get("status") or {}).get("conditions") or []
            ),
            timeout=30,
            what="the manager's Workload of the JobSet finished",
        )
        wait_for(
            lambda: worker.json("jobsets", "-n", "default").get("items"),
            lambda items: not items,
            timeout=30,
            what="the remote JobSet deleted once finished",
        )
    finally:
        manager.run("delete", "jobsets", "--all", "-n", "default", check=False)


@pytest.mark.usefixtures("workers_connected")
def test_with_the_first_worker_full_the_job_runs_on_the_second(
    clusters: dict[str, NamedCluster], kubectl: dict[str, Kubectl]
) -> None:
    manager, onprem, cloud = (kubectl[n] for n in NAMES)
    # onprem's ClusterQueue (9 CPUs) is filled by a Job of its own users.
    blocker = yaml.safe_load(SAMPLE_JOB.read_text())
    blocker["metadata"]["name"] = "onprem-local"
    blocker["spec"]["parallelism"] = blocker["spec"]["completions"] = 9
    blocker["spec"]["template"]["metadata"]["annotations"][
        "pod-complete.stage.kwok.x-k8s.io/delay"
    ] = "300s"
    onprem.apply([blocker])
    wait_for(
        lambda: _pods(onprem, "onprem-local"),
        lambda pods: len(pods) == 9,
        timeout=60,
        what="onprem full",
    )
    try:
        _lands_on_cloud(manager, onprem, cloud)
    finally:
        onprem.run("delete", "job", "onprem-local", "-n", "default", "--cascade=background")


def _lands_on_cloud(manager: Kubectl, onprem: Kubectl, cloud: Kubectl) -> None:
    job = _submit(manager, "mk-spill")
    _needs_two_phase_admission(manager, job)
    workload = _dispatched(manager, job, "the manager's Workload dispatched")
    assert workload["status"]["clusterName"] == "cloud-worker"
    wait_for(
        lambda: _pods(cloud, "mk-spill"),
        lambda pods: len(pods) == 3,
        timeout=60,
        what="the Job's pods on cloud-worker",
    )
    assert _pods(onprem, "mk-spill") == [] and _pods(manager, "mk-spill") == []


@pytest.mark.usefixtures("workers_connected")
def test_the_manager_runs_nothing_of_a_multikueue_job_itself(
    kubectl: dict[str, Kubectl],
) -> None:
    """Whatever the scheduler's admission, a MultiKueue Job never gets pods on the manager."""
    manager = kubectl["mk-manager"]
    job = _submit(manager, "mk-never-local", delay="1s")
    assert job["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    wait_for(
        lambda: _manager_workload(manager, job),
        lambda w: bool(w),
        timeout=30,
        what="the manager's Workload",
    )
    time.sleep(3)
    assert _pods(manager, "mk-never-local") == []


@pytest.mark.usefixtures("workers_connected")
def test_deleting_the_managers_job_deletes_what_runs_on_the_worker(
    kubectl: dict[str, Kubectl],
) -> None:
    manager = kubectl["mk-manager"]
    job = _submit(manager, "mk-deleted", delay="300s")
    _needs_two_phase_admission(manager, job)
    workload = _dispatched(manager, job, "the manager's Workload dispatched")
    worker = kubectl[WORKERS[workload["status"]["clusterName"]]]
    wait_for(
        lambda: _pods(worker, "mk-deleted"),
        lambda pods: len(pods) == 3,
        timeout=60,
        what="the Job's pods on the worker",
    )
    manager.run("delete", "job", "mk-deleted", "-n", "default", "--cascade=background")
    wait_for(
        lambda: (
            worker.json("jobs", "-n", "default").get("items"),
            worker.json("workloads", "-n", "default").get("items"),
        ),
        lambda seen: not seen[0] and not seen[1],
        timeout=60,
        what="the worker's Job and Workload deleted",
    )
    wait_for(
        lambda: _pods(worker, "mk-deleted"),
        lambda pods: not pods,
        timeout=60,
        what="the worker's pods gone",
    )


@pytest.mark.usefixtures("workers_connected")
def test_a_remote_workload_that_vanishes_is_retried_and_dispatched_again(
    kubectl: dict[str, Kubectl],
) -> None:
    manager = kubectl["mk-manager"]
    job = _submit(manager, "mk-retry", delay="300s")
    _needs_two_phase_admission(manager, job)
    first = _dispatched(manager, job, "the manager's Workload dispatched")
    worker = kubectl[WORKERS[first["status"]["clusterName"]]]
    worker.run("delete", "workloads", "--all", "-n", "default")
    requeued = wait_for(
        lambda: _manager_workload(manager, job),
        lambda w: (
            any(
                c.get("type") == "Requeued" and c.get("status") == "True"
                for c in (w.get("status") or {}).get("conditions") or []
            )
            and [c.get("state") for c in (w.get("status") or {}).get("admissionChecks") or []]
            == ["Ready"]
        ),
        timeout=90,
        what="the Workload requeued (check Retry) and dispatched again",
    )
    (check,) = requeued["status"]["admissionChecks"]
    assert check.get("retryCount") == 1, check
    assert requeued["status"]["clusterName"] in WORKERS
    where = kubectl[WORKERS[requeued["status"]["clusterName"]]]
    wait_for(
        lambda: _pods(where, "mk-retry"),
        lambda pods: len([p for p in pods if p["status"].get("phase") == "Running"]) == 3,
        timeout=60,
        what="the Job running again on a worker",
    )


@pytest.mark.usefixtures("workers_connected")
def test_a_second_replica_stands_by_while_the_first_leads(
    clusters: dict[str, NamedCluster], kubectl: dict[str, Kubectl], tmp_path: Path
) -> None:
    """Two replicas (as the chart runs them): one Lease holder acts, the other only watches."""
    manager = kubectl["mk-manager"]
    holder = manager.json("lease", "kuota-multikueue", "-n", "kueue-system")["spec"][
        "holderIdentity"
    ]
    second = start_multikueue(
        ToolPaths.resolve(build_if_missing=False).binary("kubectl"),
        clusters["mk-manager"].kubeconfig,
        tmp_path,
        cluster_workdir=clusters["mk-manager"].workdir,
    )
    try:
        job = _submit(manager, "mk-once", delay="1s")
        _needs_two_phase_admission(manager, job)
        _dispatched(manager, job, "the manager's Workload dispatched")
        time.sleep(2)
        lease = manager.json("lease", "kuota-multikueue", "-n", "kueue-system")
        assert lease["spec"]["holderIdentity"] == holder, "the first replica still leads"
        said = [
            json.loads(line).get("msg")
            for line in second.tail(400).splitlines()
            if line.startswith("{")
        ]
        assert "multikueue controller started" in said
        assert "leading" not in said and "multikueue action" not in said, said
        assert second.alive()
    finally:
        second.stop()


@pytest.mark.usefixtures("workers_connected")
def test_with_a_worker_down_the_job_is_dispatched_to_the_live_one(
    clusters: dict[str, NamedCluster], kubectl: dict[str, Kubectl]
) -> None:
    """Last: it stops the cloud worker's API server for good."""
    manager, onprem = kubectl["mk-manager"], kubectl["mk-onprem"]
    wait_for(
        lambda: _pods(onprem, "onprem-local"),
        lambda pods: not pods,
        timeout=60,
        what="onprem's own Job gone (capacity back)",
    )
    state = read_state(clusters["mk-cloud"].workdir) or {}
    (apiserver,) = [r for r in recorded_processes(state) if r.name == "kube-apiserver"]
    stop(apiserver)
    status, reason, _ = wait_for(
        lambda: active(manager.json("multikueuecluster", "cloud-worker")),
        lambda seen: seen is not None and seen[0] == "False",
        timeout=60,
        what="cloud-worker no longer connected",
    ) or ("", "", "")
    assert (status, reason) == ("False", "ClientConnectionFailed")
    job = _submit(manager, "mk-survivor")
    _needs_two_phase_admission(manager, job)
    workload = _dispatched(manager, job, "the manager's Workload dispatched")
    assert workload["status"]["clusterName"] == "onprem-worker"
    wait_for(
        lambda: _pods(onprem, "mk-survivor"),
        lambda pods: len(pods) == 3,
        timeout=60,
        what="the Job's pods on onprem-worker",
    )
