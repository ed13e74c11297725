"""kwok's configuration: which lifecycle stages the fake kubelet plays.

The stage files are kwok's own defaults (harvested from its module when the
tools are built).  Two changes make Jobs behave usefully for kuota's tests:

- ``pod-complete`` waits for the duration in the pod annotation
  ``pod-complete.stage.kwok.x-k8s.io/delay`` (a Go duration such as ``30s``),
  so a Job can hold its quota for a while; without it, pods finish at once.
- a ``pod-fail`` stage fails pods annotated ``kuota.test/fail: "true"`` with
  exit code 1, and ``pod-complete`` ignores those pods so the two never race.
- ``pod-delete`` removes a deleted pod at once, except one annotated
  ``pod-delete.stage.kwok.x-k8s.io/delay`` (a Go duration): a
  ``pod-delete-delayed`` stage removes it that long after, so a pod can stay
  in its termination grace period as a real one that traps ``SIGTERM`` does.
- ``pod-ready`` waits for the duration in the pod annotation
  ``pod-ready.stage.kwok.x-k8s.io/delay`` (a Go duration), so a pod can stay
  Pending and not Ready that long (``1h``: for a test, never), as a real
  pod pulling its image or failing its readiness probe does; without it,
  pods are Ready at once.
- kwok completes only pods owned by a Job; a ``pod-complete-managed`` stage
  completes the plain Pods kuota manages (label ``kueue.x-k8s.io/managed:
  "true"``) the same way, with the same delay annotation, except those a
  Deployment queued (they serve until deleted); a ``pod-complete-framework``
  stage completes the pods Kubeflow's training operator makes directly for
  its PyTorchJobs and JAXJobs, as if a Job owned them.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

DELAY_ANNOTATION = "pod-complete.stage.kwok.x-k8s.io/delay"
DELETE_DELAY_ANNOTATION = "pod-delete.stage.kwok.x-k8s.io/delay"
READY_DELAY_ANNOTATION = "pod-ready.stage.kwok.x-k8s.io/delay"
FAIL_ANNOTATION = "kuota.test/fail"
STAGE_FILES = (
    "node-initialize.yaml",
    "node-heartbeat-with-lease.yaml",
    "pod-ready.yaml",
    "pod-complete.yaml",
    "pod-delete.yaml",
)

_FAILED_STATUS = """\
{{ $now := Now }}
containerStatuses:
{{ range $index, $item := .spec.containers }}
- image: {{ $item.image | Quote }}
  name: {{ $item.name | Quote }}
  ready: false
  restartCount: 0
  started: false
  state:
    terminated:
      exitCode: 1
      finishedAt: {{ $now | Quote }}
      reason: Error
      startedAt: {{ $now | Quote }}
{{ end }}
phase: Failed
"""


def _annotation_key(name: str) -> str:
    return f'.metadata.annotations["{name}"]'


def _delayed_completion(stage: dict[str, Any]) -> dict[str, Any]:
    stage = copy.deepcopy(stage)
    stage["spec"]["selector"]["matchExpressions"].append(
        {"key": _annotation_key(FAIL_ANNOTATION), "operator": "DoesNotExist"}
    )
    stage["spec"]["delay"] = {
        "durationMilliseconds": 0,
        "durationFrom": {"expressionFrom": _annotation_key(DELAY_ANNOTATION)},
    }
    return stage


def _failure(completion: dict[str, Any]) -> dict[str, Any]:
    stage = copy.deepcopy(completion)
    stage["metadata"]["name"] = "pod-fail"
    expressions = [
        expression
        for expression in stage["spec"]["selector"]["matchExpressions"]
        if expression["key"] != _annotation_key(FAIL_ANNOTATION)
    ]
    expressions.append(
        {"key": _annotation_key(FAIL_ANNOTATION), "operator": "In", "values": ["true"]}
    )
    stage["spec"]["selector"]["matchExpressions"] = expressions
    stage["spec"]["next"] = {"statusTemplate": _FAILED_STATUS}
    return stage


def _delayed_readiness(stage: dict[str, Any]) -> dict[str, Any]:
    """kwok's ``pod-ready``, that long after the pod asks for it (none: at once)."""
    stage = copy.deepcopy(stage)
    stage["spec"]["delay"] = {
        "durationMilliseconds": 0,
        "durationFrom": {"expressionFrom": _annotation_key(READY_DELAY_ANNOTATION)},
    }
    return stage


def _prompt_deletion(stage: dict[str, Any]) -> dict[str, Any]:
    """kwok's fast ``pod-delete`` for every deleted pod but those that ask for a delay."""
    stage = copy.deepcopy(stage)
    selector = stage["spec"].setdefault("selector", {})
    selector.setdefault("matchExpressions", []).append(
        {"key": _annotation_key(DELETE_DELAY_ANNOTATION), "operator": "DoesNotExist"}
    )
    return stage


def _delayed_deletion(stage: dict[str, Any]) -> dict[str, Any]:
    """A deleted pod annotated with a delay stays (terminating) that long, then goes."""
    stage = copy.deepcopy(stage)
    stage["metadata"]["name"] = "pod-delete-delayed"
    selector = stage["spec"].setdefault("selector", {})
    selector.setdefault("matchExpressions", []).append(
        {"key": _annotation_key(DELETE_DELAY_ANNOTATION), "operator": "Exists"}
    )
    stage["spec"]["delay"] = {
        "durationMilliseconds": 0,
        "durationFrom": {"expressionFrom": _annotation_key(DELETE_DELAY_ANNOTATION)},
    }
    return stage


MANAGED_LABEL = "kueue.x-k8s.io/managed"
PARENT = "kueue.x-k8s.io/pod-suspending-parent"


def _managed_pod_completion(completion: dict[str, Any]) -> dict[str, Any]:
    stage = copy.deepcopy(completion)
    stage["metadata"]["name"] = "pod-complete-managed"
    expressions = [
        expression
        for expression in stage["spec"]["selector"]["matchExpressions"]
        if expression["key"] != ".metadata.ownerReferences.[].kind"
    ]
    expressions.append(
        {"key": f'.metadata.labels["{MANAGED_LABEL}"]', "operator": "In", "values": ["true"]}
    )
    # A Deployment's pods serve: they run until deleted, never complete.
    expressions.append({"key": f'.metadata.annotations["{PARENT}"]', "operator": "DoesNotExist"})
    stage["spec"]["selector"]["matchExpressions"] = expressions
    return stage


FRAMEWORK_POD_OWNERS = ("PyTorchJob", "JAXJob")
"""Kinds whose controller (Kubeflow's training operator) makes pods directly, as a Job would."""


def _framework_pod_completion(completion: dict[str, Any]) -> dict[str, Any]:
    stage = copy.deepcopy(completion)
    stage["metadata"]["name"] = "pod-complete-framework"
    owner = ".metadata.ownerReferences.[].kind"
    expressions = [
        expression
        for expression in stage["spec"]["selector"]["matchExpressions"]
        if expression["key"] != owner
    ]
    expressions.append({"key": owner, "operator": "In", "values": list(FRAMEWORK_POD_OWNERS)})
    stage["spec"]["selector"]["matchExpressions"] = expressions
    return stage


def kwok_object(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """One object of kwok's own API (a Stage, a ClusterExec), as its configuration holds it."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


def render(stages_dir: Path) -> str:
    """The multi-document kwok.yaml for a cluster (reads the stage files)."""
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
            "kind": "KwokConfiguration",
            # kwok applies its option defaults only through kwokctl: set them here.
            "options": {
                "cidr": "10.0.0.0/16",
                "enableDebuggingHandlers": True,  # exec and logs on kwok's pods
                "nodeLeaseDurationSeconds": 40,
                "nodeLeaseParallelism": 4,
                "podPlayStageParallelism": 4,
                "nodePlayStageParallelism": 4,
                "podsOnNodeSyncParallelism": 2,
            },
        }
    ]
    for name in STAGE_FILES:
        stage = yaml.safe_load((stages_dir / name).read_text())
        if stage["metadata"]["name"] == "pod-complete":
            stage = _delayed_completion(stage)
            documents.append(_failure(stage))
            documents.append(_managed_pod_completion(stage))
            documents.append(_framework_pod_completion(stage))
        if stage["metadata"]["name"] == "pod-ready":
            stage = _delayed_readiness(stage)
        if stage["metadata"]["name"] == "pod-delete":
            documents.append(_delayed_deletion(stage))
            stage = _prompt_deletion(stage)
        documents.append(stage)
    return yaml.safe_dump_all(documents, sort_keys=False)
