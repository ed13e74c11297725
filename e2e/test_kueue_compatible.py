"""The chart's Kueue-compatible install on a real node, and Kueue's own specs against it.

The cluster is the one ``make test-kueue-e2e`` gives Kueue's suites
(:mod:`e2e.kueue_suites.environment`): a real node running kuota's image from
``make image``, tainted so that workloads run on two kwok workers named and
labelled as Kueue's kind cluster's, kwok playing the agnhost containers; the
chart installed with ``kueueCompatible: true`` and
``e2e/kueue_suites/values.yaml``.  The tests run in order and build on each other:

1. what Kueue's suites wait for is there, under Kueue's names, served by kuota;
2. the short form of ``make test-kueue-e2e``: the singlecluster/baseline specs
   listed in ``e2e/kueue_suites/expected_pass.txt`` (those that passed at the
   recorded baseline and take seconds each) must pass again; each runs through
   both of kuota's processes with the chart's ServiceAccount, so an RBAC gap
   fails it, and so does the log check after them;
3. a Configuration written into the ConfigMap takes effect when the
   Deployment restarts (what the sequential suites do);
4. ``helm uninstall`` takes the Lease and the certificate Secret along.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from e2e.cluster.node_config import NODE_NAME
from e2e.cluster.tools import ToolPaths
from e2e.image import recipe
from e2e.kueue_suites import environment, report
from e2e.kueue_suites.__main__ import OUT, Filters, dry_run, run_binary
from e2e.kueue_suites.tools import KueueE2ETools
from tests.chart.helm import run_helm

pytestmark = pytest.mark.cluster

T = TypeVar("T")
NS = environment.NAMESPACE
NAME = "kueue-controller-manager"
LEASE = "c1f6bfd2.kueue.x-k8s.io"
SUITE = "singlecluster/baseline"
EXPECTED = Path(environment.__file__).with_name("expected_pass.txt")
TEAM = "team-compat"


def expected_specs() -> list[str]:
    """The spec texts of ``expected_pass.txt`` (blank lines and ``#`` comments ignored)."""
    lines = EXPECTED.read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


_RE2_SPECIAL = set("\\.+*?()|[]{}^$")


def focus_for(specs: list[str]) -> str:
    """A ``--ginkgo.focus`` (Go RE2) that selects exactly these full texts (labels stripped)."""
    texts = [re.sub(r"\s*\[[^\]]*\]$", "", spec) for spec in specs]
    escaped = ["".join("\\" + c if c in _RE2_SPECIAL else c for c in text) for text in texts]
    # Ginkgo matches the focus against "<suite description> <spec text>".
    return " (?:" + "|".join(escaped) + ")$"


@dataclass
class Kube:
    kubeconfig: Path
    binary: Path

    def run(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        done = subprocess.run(
            [str(self.binary), "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=180,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {done.stdout}{done.stderr}")
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json"))

    def apply(self, objects: list[dict[str, Any]]) -> str:
        return self.run("apply", "-f", "-", stdin=yaml.safe_dump_all(objects))


def eventually(probe: Callable[[], T], accept: Callable[[T], bool], what: str, timeout: float) -> T:
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            value = probe()
        except AssertionError as failure:
            last = failure
        else:
            if accept(value):
                return value
            last = value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last seen: {last!r}")


@pytest.fixture(scope="module")
def env() -> Iterator[environment.Environment]:
    external = os.environ.get("KUBECONFIG")
    if external and Path(external).is_file():
        pytest.skip("runs its own local cluster with a real node; KUBECONFIG names another cluster")
    with tempfile.TemporaryDirectory(prefix="kuota-kueue-image-") as directory:
        images = (environment.kuota_image(Path(directory)),)  # a cache hit after `make image`
        with environment.running(SUITE, images=images) as running:
            yield running


@pytest.fixture(scope="module")
def kube(env: environment.Environment) -> Kube:
    return Kube(env.cluster.kubeconfig, ToolPaths.resolve(build_if_missing=False).binary("kubectl"))


def _pods(kube: Kube) -> list[dict[str, Any]]:
    pods = kube.json("get", "pods", "-n", NS, "-l", "control-plane=controller-manager")["items"]
    return [p for p in pods if p["metadata"].get("deletionTimestamp") is None]


def _ready(pod: dict[str, Any]) -> bool:
    conditions = pod.get("status", {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


# -- 1. Kueue's names, served by kuota ----------------------------------------------------


def test_kueues_controller_manager_is_kuotas_two_processes_on_the_real_node(kube: Kube) -> None:
    deployment = kube.json("get", "deployment", NAME, "-n", NS)
    available = {c["type"]: c["status"] for c in deployment["status"]["conditions"]}
    assert available["Available"] == "True"
    (pod,) = _pods(kube)
    assert _ready(pod) and pod["spec"]["nodeName"] == NODE_NAME
    statuses = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    assert set(statuses) == {"manager", "scheduler"}
    for status in statuses.values():
        assert "running" in status["state"] and status["restartCount"] == 0
        assert status["image"].endswith(f"kuota:{recipe.version()}")
    assert pod["spec"]["serviceAccountName"] == NAME


def test_the_webhook_service_endpoints_are_the_ready_pods(kube: Kube) -> None:
    (pod,) = _pods(kube)
    slices = kube.json(
        "get", "endpointslices", "-n", NS, "-l", "kubernetes.io/service-name=kueue-webhook-service"
    )["items"]
    ready = {
        address
        for piece in slices
        for endpoint in piece.get("endpoints") or []
        if (endpoint.get("conditions") or {}).get("ready", True)
        for address in endpoint["addresses"]
    }
    assert ready == {pod["status"]["podIP"]}
    for kind in ("mutating", "validating"):
        configuration = kube.json(
            "get", f"{kind}webhookconfiguration", f"kueue-{kind}-webhook-configuration"
        )
        for webhook in configuration["webhooks"]:
            assert webhook["clientConfig"]["caBundle"], "the bootstrap injected Kueue's names"
    # The data path Kueue's suites probe: a dry-run ResourceFlavor through the webhook.
    probe = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"generateName": "webhook-probe-"},
    }
    # As Kueue's suites wait for it (an Eventually): a ready pod may still be reloading the
    # certificate the bootstrap just wrote when the first call arrives.
    answer = eventually(
        lambda: subprocess.run(
            [str(kube.binary), "--kubeconfig", str(kube.kubeconfig), "create"]
            + ["--dry-run=server", "-f", "-"],
            input=json.dumps(probe),
            capture_output=True,
            text=True,
            timeout=60,
        ),
        lambda done: done.returncode == 0,
        "a dry-run ResourceFlavor admitted through the webhook",
        timeout=60,
    )
    assert "webhook-probe-" in answer.stdout


def test_kueues_lease_is_held_by_the_pod_and_renewed(kube: Kube) -> None:
    (pod,) = _pods(kube)
    first = kube.json("get", "lease", LEASE, "-n", NS)
    assert first["spec"]["holderIdentity"].split("_")[0] == pod["metadata"]["name"]
    owners = [(o["kind"], o["name"]) for o in first["metadata"].get("ownerReferences", [])]
    assert owners == [("Deployment", NAME)]
    eventually(
        lambda: kube.json("get", "lease", LEASE, "-n", NS)["spec"]["renewTime"],
        lambda renewed: renewed != first["spec"]["renewTime"],
        "the leader to renew Kueue's Lease",
        30,
    )


# -- 2. Kueue's own specs: the regression guard --------------------------------------------


def test_the_specs_that_passed_at_baseline_still_pass(env: environment.Environment) -> None:
    tools = KueueE2ETools.resolve([SUITE], build_if_missing=False)  # make kueue-e2e-tools
    specs = expected_specs()
    assert specs, f"{EXPECTED} lists no spec"
    filters = Filters(focus=focus_for(specs), label_filter="!feature:prometheus")
    out = OUT / "short-form"
    selected = set(dry_run(tools, SUITE, filters, out / "selected.xml"))
    assert selected == set(specs), (
        f"the focus selects {sorted(selected ^ set(specs))} differently from {EXPECTED}"
    )
    started = time.monotonic()
    parsed, error, _ = run_binary(tools, SUITE, filters, kubeconfig=env.cluster.kubeconfig, out=out)
    assert parsed is not None, error
    run = report.SuiteRun(suite=SUITE, inventory=tuple(specs), selected=tuple(specs), report=parsed)
    print(f"\n{report.table([report.row(run)])}\n({time.monotonic() - started:.0f}s)")
    states = report.spec_states(run)
    outcomes = run.outcomes()
    regressed = {
        name: f"{state}: {outcomes[name].location} {outcomes[name].message[:300]}"
        if name in outcomes
        else state
        for name, state in states.items()
        if state != "passed"
    }
    assert not regressed, f"{error}\n(log: {out / 'run.log'})\n" + "\n".join(
        f"- {name}: {why}" for name, why in regressed.items()
    )


def test_no_call_of_either_process_was_forbidden(kube: Kube) -> None:
    """An RBAC gap in the one ServiceAccount shows as a 403 in a process's log."""
    (pod,) = _pods(kube)
    for container in ("manager", "scheduler"):
        log = kube.run("logs", "-n", NS, pod["metadata"]["name"], "-c", container)
        # The API server's refusal reads "... is forbidden: User ... cannot ..." (status 403).
        denied = [line for line in log.splitlines() if "forbidden" in line.lower()]
        assert not denied, f"{container}: " + "\n".join(denied[:5])


# -- 3. the ConfigMap, read at start ------------------------------------------------------


def _queue_objects() -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TEAM}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "compat-on-demand"},
            "spec": {"nodeLabels": {"instance-type": "on-demand"}},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "compat"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {
                                "name": "compat-on-demand",
                                "resources": [{"name": "cpu", "nominalQuota": "4"}],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "main", "namespace": TEAM},
            "spec": {"clusterQueue": "compat"},
        },
    ]


def _job_with_an_uncovered_resource() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "wants-a-gadget",
            "namespace": TEAM,
            "labels": {"kueue.x-k8s.io/queue-name": "main"},
        },
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "c",
                            "image": environment.AGNHOST_IMAGE,
                            "args": ["netexec"],
                            "resources": {
                                "requests": {"cpu": "1", "example.com/gadget": "1"},
                                "limits": {"example.com/gadget": "1"},
                            },
                        }
                    ],
                }
            }
        },
    }


def _workload(kube: Kube) -> dict[str, Any] | None:
    items = kube.json("get", "workloads", "-n", TEAM)["items"]
    return items[0] if items else None


def _admitted(workload: dict[str, Any] | None) -> bool:
    conditions = (workload or {}).get("status", {}).get("conditions") or []
    return any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions)


def test_a_configuration_written_to_the_configmap_applies_after_a_restart(kube: Kube) -> None:
    eventually(lambda: kube.apply(_queue_objects()), bool, "the queues to be accepted", 60)
    kube.apply([_job_with_an_uncovered_resource()])
    pending = eventually(
        lambda: _workload(kube),
        lambda w: w is not None and bool((w.get("status") or {}).get("conditions")),
        "the Job's Workload to be considered",
        60,
    )
    assert not _admitted(pending), "example.com/gadget is not covered by the ClusterQueue"
    # What Kueue's sequential suites do: rewrite the ConfigMap's Configuration, then
    # restart the Deployment (kubectl.kubernetes.io/restartedAt), and wait for it.
    configmap = kube.json("get", "configmap", "kueue-manager-config", "-n", NS)
    config = yaml.safe_load(configmap["data"]["controller_manager_config.yaml"])
    config["resources"] = {"excludeResourcePrefixes": ["example.com/"]}
    configmap["data"]["controller_manager_config.yaml"] = yaml.safe_dump(config)
    kube.run("replace", "-f", "-", stdin=json.dumps(configmap))
    (before,) = _pods(kube)
    kube.run("rollout", "restart", f"deployment/{NAME}", "-n", NS)
    kube.run("rollout", "status", f"deployment/{NAME}", "-n", NS, "--timeout=300s")
    eventually(
        lambda: _pods(kube),
        lambda pods: (
            len(pods) == 1
            and pods[0]["metadata"]["name"] != before["metadata"]["name"]
            and _ready(pods[0])
        ),
        "the restarted pod",
        120,
    )
    admitted = eventually(
        lambda: _workload(kube), _admitted, "the Workload to be admitted without the gadget", 120
    )
    usage = admitted["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]
    assert set(usage) == {"cpu"}, "the excluded resource is left out of quota"


# -- 4. uninstall --------------------------------------------------------------------------


def test_helm_uninstall_takes_the_lease_and_the_secret_along(
    env: environment.Environment, kube: Kube
) -> None:
    kube.run("delete", "namespace", TEAM, "--wait=true", "--timeout=120s")
    run_helm(
        "uninstall",
        environment.RELEASE,
        "-n",
        NS,
        "--wait",
        "--timeout",
        "3m",
        kubeconfig=env.cluster.kubeconfig,
        timeout=300,
    )

    def left() -> set[str]:
        found = kube.json("get", "deployments,leases,secrets,services", "-n", NS)["items"]
        return {f"{o['kind']}/{o['metadata']['name']}" for o in found}

    eventually(left, lambda names: not names, "the release's objects to go", 120)
    for kind in ("mutating", "validating"):
        assert f"kueue-{kind}" not in kube.run("get", f"{kind}webhookconfigurations", "-o", "name")
