"""kwok's stages for Kueue's suites: pods behave as their agnhost arguments ask.

Kueue's specs run ``registry.k8s.io/e2e-test-images/agnhost`` and choose what
the container does by its first argument (``test/util/constants.go``):

- ``entrypoint-tester`` (``BehaviorExitFast``): prints its arguments and exits 0;
- ``netexec`` (``BehaviorWaitForDeletion``): serves until deleted; SIGTERM makes
  it exit 0 (``netexec.go``: ``os.Exit(0)`` in its SIGTERM handler);
- ``test-webserver`` (``BehaviorWaitForDeletionFailOnExit``): serves until
  deleted, with no signal handler, so SIGTERM kills it: the container ends with
  exit code 143 (128 + SIGTERM) and the pod ``Failed``;
- anything else (another image, ``pause``, no arguments): runs until deleted,
  ends with 0 on SIGTERM.

The workloads run on kwok's nodes, so these stages play what the kubelet would
do with those containers, keyed on the first container command or argument of
each container other than the binary ``/agnhost`` (a ``jq`` query over the pod, as
kwok's selectors are):

==========================  ====================================================
``pod-ready``               kwok's own: a bound ``Pending`` pod becomes ``Running``
``agnhost-exit-fast``       every container is ``entrypoint-tester`` and the pod
                            does not restart (``restartPolicy`` not ``Always``):
                            ``Succeeded`` with exit 0, one second after it runs
``agnhost-exit-0``          a ``Running`` pod whose agnhost was asked to exit
                            with 0 (``/exit?code=0`` through ``kubectl exec``,
                            :mod:`.pod_exec`): ``Succeeded`` a second later
``agnhost-exit-code``       the same with another code: that exit code, ``Failed``
``agnhost-stop``            a ``Running`` pod being deleted, no ``test-webserver``:
                            its containers end with 0, the pod ``Succeeded``
``agnhost-stop-failing``    the same with a ``test-webserver`` container: 143,
                            ``Failed``
``pod-delete``              a pod being deleted that no longer runs is deleted
                            (grace period 0, as the kubelet does at the end);
                            its finalizers, if any, keep it until removed
==========================  ====================================================

A pod whose containers restart (``restartPolicy: Always``) and exit at once
stays ``Running``: the restart loop is not played.  Nothing else of kwok's
defaults (``pod-complete`` of Job pods at once) is loaded: a Job's pod ends
only as its arguments say.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster.kwok_config import STAGE_FILES, kwok_object

from .pod_exec import EXIT_CODE_ANNOTATION

_BEHAVIOURS = (
    '[.spec.containers[] | ((.command // []) + (.args // []) | map(select(. != "/agnhost")))[0]'
    ' // ""]'
)
"""Each container's agnhost behaviour: its first command or argument, past the binary itself
(a TrainJob's trainer runs ``command: [/agnhost]`` with the behaviour in ``args``)."""
EXIT_FAST = _BEHAVIOURS + ' | all(. == "entrypoint-tester")'
FAILS_ON_EXIT = _BEHAVIOURS + ' | any(. == "test-webserver")'
KEPT_FROM_KWOK = ("node-initialize.yaml", "node-heartbeat-with-lease.yaml", "pod-ready.yaml")
EXIT_CODE_SIGTERM = 143
EXIT_ASKED = f'.metadata.annotations["{EXIT_CODE_ANNOTATION}"]'
# ``$``: the pod, also inside the template's range over its containers
_ASKED_CODE = f'{{{{ index $.metadata.annotations "{EXIT_CODE_ANNOTATION}" }}}}'

_TERMINATED = """\
{{{{ $now := Now }}}}
conditions:
- lastTransitionTime: {{{{ $now | Quote }}}}
  reason: PodCompleted
  status: "False"
  type: Ready
- lastTransitionTime: {{{{ $now | Quote }}}}
  reason: PodCompleted
  status: "False"
  type: ContainersReady
containerStatuses:
{{{{ range $index, $item := .spec.containers }}}}
- image: {{{{ $item.image | Quote }}}}
  name: {{{{ $item.name | Quote }}}}
  ready: false
  restartCount: 0
  started: false
  state:
    terminated:
      exitCode: {exit_code}
      finishedAt: {{{{ $now | Quote }}}}
      reason: {reason}
      startedAt: {{{{ $now | Quote }}}}
{{{{ end }}}}
phase: {phase}
"""


def terminated_status(exit_code: int) -> str:
    """kwok's status template of a pod whose containers all ended with ``exit_code`` (pure)."""
    if exit_code == 0:
        return _TERMINATED.format(exit_code=0, reason="Completed", phase="Succeeded")
    return _TERMINATED.format(exit_code=exit_code, reason="Error", phase="Failed")


def _pod_stage(
    name: str, expressions: list[dict[str, Any]], nxt: dict[str, Any], delay_ms: int = 0
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
        "selector": {"matchExpressions": expressions},
        "next": nxt,
    }
    if delay_ms:
        spec["delay"] = {"durationMilliseconds": delay_ms}
    return kwok_object("Stage", name, spec)


def _is(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def _is_not(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "NotIn", "values": list(values)}


DELETING = {"key": ".metadata.deletionTimestamp", "operator": "Exists"}
NOT_DELETING = {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}


def agnhost_stages() -> list[dict[str, Any]]:
    """The pod stages that replace kwok's completion and deletion (pure)."""
    running = _is(".status.phase", "Running")
    return [
        _pod_stage(
            "agnhost-exit-fast",
            [
                NOT_DELETING,
                running,
                _is(EXIT_FAST, "true"),
                _is_not(".spec.restartPolicy", "Always"),
            ],
            {"statusTemplate": terminated_status(0)},
            delay_ms=1000,
        ),
        _pod_stage(
            "agnhost-exit-0",
            [NOT_DELETING, running, _is(EXIT_ASKED, "0")],
            {"statusTemplate": terminated_status(0)},
            delay_ms=1000,
        ),
        _pod_stage(
            "agnhost-exit-code",
            [
                NOT_DELETING,
                running,
                {"key": EXIT_ASKED, "operator": "Exists"},
                _is_not(EXIT_ASKED, "0"),
            ],
            {
                "statusTemplate": _TERMINATED.format(
                    exit_code=_ASKED_CODE, reason="Error", phase="Failed"
                )
            },
            delay_ms=1000,
        ),
        _pod_stage(
            "agnhost-stop",
            [DELETING, running, _is_not(FAILS_ON_EXIT, "true")],
            {"statusTemplate": terminated_status(0)},
            delay_ms=500,
        ),
        _pod_stage(
            "agnhost-stop-failing",
            [DELETING, running, _is(FAILS_ON_EXIT, "true")],
            {"statusTemplate": terminated_status(EXIT_CODE_SIGTERM)},
            delay_ms=500,
        ),
        _pod_stage(
            "pod-delete",
            [DELETING, _is_not(".status.phase", "Running")],
            {"delete": True},
        ),
    ]


def render(stages_dir: Path, extra: Sequence[dict[str, Any]] = ()) -> str:
    """The multi-document kwok.yaml for Kueue's suites (reads kwok's node and ready stages).

    ``extra``: more kwok objects, e.g. the ``ClusterExec`` of :mod:`.pod_exec`."""
    assert set(KEPT_FROM_KWOK) <= set(STAGE_FILES)
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
            "kind": "KwokConfiguration",
            "options": {
                "cidr": "10.245.0.0/16",  # apart from the Service and real-node pod ranges
                "enableDebuggingHandlers": True,  # exec and logs on kwok's pods
                "nodeLeaseDurationSeconds": 40,
                "nodeLeaseParallelism": 4,
                "podPlayStageParallelism": 4,
                "nodePlayStageParallelism": 4,
                "podsOnNodeSyncParallelism": 2,
            },
        }
    ]
    documents += [yaml.safe_load((stages_dir / name).read_text()) for name in KEPT_FROM_KWOK]
    documents += agnhost_stages()
    documents += extra
    return yaml.safe_dump_all(documents, sort_keys=False)
