"""The real JobSet controller on the local cluster: CRD, manager, webhooks by URL.

JobSet (``jobset.x-k8s.io/v1alpha2``) needs three things on a cluster, and
this module provides each the way the local cluster needs (docs/testing.md#the-local-cluster):

* **the CRD**, taken from the pinned module (``jobset_tools``), created through
  the API and waited on until ``Established``;
* **the controller manager**, a local process on 127.0.0.1 with the admin
  kubeconfig.  It therefore needs no RBAC of its own: the admin certificate is
  in ``system:masters`` (upstream's ClusterRole would be what a real
  installation binds to its ServiceAccount).  Leader election is off (one
  replica), the metrics server is off, and the manager's internal certificate
  management is switched off: it would write a Secret and patch webhook
  configurations that point at a Service.  The harness generates the serving
  certificate for 127.0.0.1 instead and hands the manager the directory;
* **its webhooks**, which JobSets need to work: the mutating webhook fills the
  defaults the controller relies on (success and startup policy, Indexed
  completion, DNS hostnames), the validating one rejects what the controller
  cannot run, and two Pod webhooks (scoped to JobSet's Pods by the module's own
  kustomize patches) handle exclusive placement.  The registrations are the
  module's manifests with those patches applied and every
  ``clientConfig.service`` replaced by a ``url`` on 127.0.0.1 plus the
  generated CA: the API server never dials a Service here.

Everything runs only when asked (``python -m e2e.cluster up --jobset``, the
``jobset`` session fixture): the other suites never pay for it.  The process
is recorded like the control plane's components, so ``down`` stops it; it
stops after the API server (like kuota's webhook), since JobSet's Pods cannot
be created while a registered ``failurePolicy: Fail`` webhook is gone.
"""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonpatch
import yaml

from certs import files as cert_files

from .controller_start import CRD_PATH, ControllerStartError, apply, wait_for
from .controlplane import ClusterInfo, free_port
from .jobset_tools import JobSetTools
from .kubeapi import AdminClient, request
from .processes import ProcessRecord, clean_env, log_tail, spawn, stop

PROCESS_NAME = "jobset-controller"
NAME_PREFIX = "jobset-"  # what upstream's kustomize overlay prefixes its objects with
_ADMISSION = "/apis/admissionregistration.k8s.io/v1"
WEBHOOK_PATHS = {
    "MutatingWebhookConfiguration": f"{_ADMISSION}/mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": f"{_ADMISSION}/validatingwebhookconfigurations",
}
PROBE_PATH = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets?dryRun=All"
PROBE_JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "jobset-webhook-probe", "namespace": "default"},
    "spec": {
        "replicatedJobs": [
            {
                "name": "probe",
                "template": {
                    "spec": {
                        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
                    }
                },
            }
        ]
    },
}


JobSetStartError = ControllerStartError
"""The controller or its registrations did not come up; carries its log tail."""


def manager_configuration(*, webhook_port: int, health_port: int, cert_dir: Path) -> dict[str, Any]:
    """The manager's ``Configuration`` file for a local, single-replica run (pure)."""
    return {
        "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
        "kind": "Configuration",
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(cert_dir)},
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": "0"},  # "0" switches controller-runtime's metrics server off
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
    }


def webhook_configurations(
    manifests: list[dict[str, Any]],
    kustomization: dict[str, Any],
    patches: dict[str, list[dict[str, Any]]],
    *,
    base_url: str,
    ca_bundle: str,
    prefix: str = NAME_PREFIX,
) -> list[dict[str, Any]]:
    """The module's webhook registrations, patched as upstream does, reached by URL (pure).

    ``patches`` maps each patch file named in the kustomization to its JSON
    patch; each applies to the object its ``target`` names.  Every
    ``clientConfig.service`` becomes ``url: base_url + path`` with the CA;
    each configuration's name gets ``prefix``, as upstream's overlay does.
    """
    rendered = []
    for manifest in manifests:
        document: dict[str, Any] = manifest
        for entry in kustomization.get("patches", []):
            target = entry.get("target", {})
            if (
                target.get("kind") == document["kind"]
                and target.get("name") == (document["metadata"]["name"])
            ):
                document = jsonpatch.apply_patch(document, patches[entry["path"]])
        document = {
            **document,
            "metadata": {"name": prefix + document["metadata"]["name"]},
            "webhooks": [
                {
                    **webhook,
                    "clientConfig": {
                        "url": base_url + webhook["clientConfig"]["service"]["path"],
                        "caBundle": ca_bundle,
                    },
                }
                for webhook in document["webhooks"]
            ],
        }
        rendered.append(document)
    return rendered


def load_webhook_configurations(
    tools: JobSetTools, *, base_url: str, ca_bundle: str
) -> list[dict[str, Any]]:
    """Read the module's webhook manifests from the cache and render them by URL."""
    directory = tools.webhook_dir
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    manifests = [
        document
        for document in yaml.safe_load_all((directory / "manifests.yaml").read_text())
        if document
    ]
    patches = {
        entry["path"]: yaml.safe_load((directory / entry["path"]).read_text())
        for entry in kustomization.get("patches", [])
    }
    return webhook_configurations(
        manifests, kustomization, patches, base_url=base_url, ca_bundle=ca_bundle
    )


@dataclass
class JobSetController:
    """A running JobSet manager on 127.0.0.1 and what was registered for it."""

    client: AdminClient
    webhook_port: int
    health_port: int
    cert_dir: Path
    record: ProcessRecord
    process: subprocess.Popen[bytes] | None
    registrations: list[tuple[str, str]]  # (collection path, name) of each webhook configuration

    @property
    def base_url(self) -> str:
        return f"https://127.0.0.1:{self.webhook_port}"

    def log_tail(self, lines: int = 80) -> str:
        return log_tail(self.record.log, lines)

    def uninstall(self) -> None:
        """Registrations first, then the process: nothing is left calling a webhook that is gone.

        The process is stopped even when the API server no longer answers.
        """
        try:
            for collection, name in self.registrations:
                self.client.call("DELETE", f"{collection}/{name}")
            self.registrations = []
        finally:
            stop(self.record, reap=_reaper(self.process))


def install_jobset(
    info: ClusterInfo,
    workdir: Path,
    *,
    tools: JobSetTools | None = None,
    die_with_parent: bool = True,
    timeout: float = 90,
) -> JobSetController:
    """Install JobSet on a local cluster: CRD, the manager running, its webhooks by URL.

    Returns once the API server really calls the webhooks (a server-side dry
    run of a JobSet comes back defaulted), since registrations take effect
    through an informer.
    """
    tools = tools or JobSetTools.resolve()
    client = info.client()
    cert_dir = workdir / "jobset-webhook-certs"
    cert_files.write(cert_dir, cert_files.make(dns_names=["localhost"], ip_addresses=["127.0.0.1"]))
    apply(client, CRD_PATH, yaml.safe_load(tools.crd.read_text()))
    controller = _start_manager(tools, info, workdir, cert_dir, die_with_parent=die_with_parent)
    try:
        ca_bundle = base64.b64encode((cert_dir / "ca.crt").read_bytes()).decode()
        for configuration in load_webhook_configurations(
            tools, base_url=controller.base_url, ca_bundle=ca_bundle
        ):
            collection = WEBHOOK_PATHS[configuration["kind"]]
            apply(client, collection, configuration)
            controller.registrations.append((collection, configuration["metadata"]["name"]))
        _wait(
            controller,
            _defaulted_by_webhook(client),
            "the API server calling JobSet's webhooks",
            timeout,
        )
    except BaseException:
        controller.uninstall()
        raise
    return controller


def _start_manager(
    tools: JobSetTools, info: ClusterInfo, workdir: Path, cert_dir: Path, *, die_with_parent: bool
) -> JobSetController:
    """Start the manager on fresh ports; pick new ones when it lost a race for them."""
    config_path = workdir / "jobset-controller.yaml"
    for _attempt in range(3):
        webhook_port, health_port = free_port(), free_port()
        config_path.write_text(
            yaml.safe_dump(
                manager_configuration(
                    webhook_port=webhook_port, health_port=health_port, cert_dir=cert_dir
                )
            )
        )
        process, record = spawn(
            PROCESS_NAME,
            [
                str(tools.manager),
                f"--kubeconfig={info.kubeconfig}",
                f"--config={config_path}",
                "--zap-log-level=info",
            ],
            workdir=workdir,
            env=clean_env(workdir),
            die_with_parent=die_with_parent,
        )
        controller = JobSetController(
            client=info.client(),
            webhook_port=webhook_port,
            health_port=health_port,
            cert_dir=cert_dir,
            record=record,
            process=process,
            registrations=[],
        )
        try:
            _wait(controller, _ready(health_port), "the JobSet manager's /readyz", 60)
            return controller
        except JobSetStartError:
            stop(record, reap=_reaper(process))
            if "address already in use" not in controller.log_tail(20):
                raise
    raise JobSetStartError("jobset-controller: no free port after 3 attempts")


def _reaper(process: subprocess.Popen[bytes] | None) -> Callable[[], None] | None:
    """Collect our child's exit status while waiting, so it does not linger as a zombie."""
    if process is None:
        return None
    child = process

    def reap() -> None:
        child.poll()

    return reap


def _ready(health_port: int) -> Callable[[], bool]:
    return lambda: request(f"http://127.0.0.1:{health_port}/readyz", timeout=2).status == 200


def _defaulted_by_webhook(client: AdminClient) -> Callable[[], bool]:
    """Only JobSet's mutating webhook sets a success policy; the CRD has no default for it."""

    def probe() -> bool:
        reply = client.call("POST", PROBE_PATH, PROBE_JOBSET)
        if reply.status != 201:
            return False
        policy = reply.body.get("spec", {}).get("successPolicy") or {}
        return bool(policy.get("operator") == "All")

    return probe


def _wait(
    controller: JobSetController, predicate: Callable[[], bool], what: str, timeout: float
) -> None:
    wait_for(controller.process, "jobset-controller", controller.log_tail, predicate, what, timeout)
