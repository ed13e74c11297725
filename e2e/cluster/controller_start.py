"""Starting a third-party controller beside the local cluster: waiting for it, applying its
manifests, and the one error every such start raises.

Shared by the JobSet controller (:mod:`e2e.cluster.jobset`) and the framework
controllers (:mod:`e2e.cluster.frameworks`).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any

from .kubeapi import AdminClient, Response

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


class ControllerStartError(RuntimeError):
    """The controller or its registrations did not come up; carries its log tail."""


def wait_for(
    process: subprocess.Popen[bytes] | None,
    name: str,
    log_tail: Callable[[], str],
    predicate: Callable[[], bool],
    what: str,
    timeout: float,
) -> None:
    """Until ``predicate`` holds; fails at once when the process exits, else at ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise ControllerStartError(
                f"{name} exited ({process.returncode}) while waiting for {what}:\n{log_tail()}"
            )
        try:
            if predicate():
                return
        except OSError:
            pass  # not listening yet
        time.sleep(0.25)
    raise ControllerStartError(f"timed out after {timeout:.0f}s waiting for {what}:\n{log_tail()}")


def apply(client: AdminClient, collection: str, manifest: dict[str, Any]) -> None:
    """Create the object, or replace it when it already exists (a re-run on the same cluster)."""
    reply = client.call("POST", collection, manifest, timeout=60)
    if reply.status == 409:
        path = f"{collection}/{manifest['metadata']['name']}"
        current = client.call("GET", path)
        if current.status == 200:
            version = current.body["metadata"]["resourceVersion"]
            body = {**manifest, "metadata": {**manifest["metadata"], "resourceVersion": version}}
            reply = client.call("PUT", path, body, timeout=60)
    check(reply, f"applying {manifest['kind']} {manifest['metadata']['name']}")
    if manifest["kind"] == "CustomResourceDefinition":
        wait_established(client, manifest["metadata"]["name"])


def wait_established(client: AdminClient, name: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = client.call("GET", f"{CRD_PATH}/{name}")
        status = (reply.body.get("status") or {}) if reply.status == 200 else {}
        conditions = status.get("conditions") or []
        if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
            return
        time.sleep(0.25)
    raise ControllerStartError(f"CRD {name} not Established within {timeout:.0f}s")


def check(reply: Response, what: str) -> None:
    if reply.status not in (200, 201):
        raise ControllerStartError(f"{what}: HTTP {reply.status}: {reply.body}")
