"""The ``Configuration`` file: ``config.kueue.x-k8s.io/v1beta1`` → ``v1beta2``.

See docs/configuration.md#versions.


A Configuration is a file, not an API object: no API server converts it, and
kuota's processes read ``v1beta2``.  ``kuota convert`` rewrites a ``v1beta1``
file into a ``v1beta2`` one that means the same to Kueue v0.19 and to kuota,
the way Kueue's own converter reads one:

* ``fairSharing.enable``: ``false`` or absent → no ``fairSharing`` section
  (v1beta2 enables fair sharing by the section's presence); ``true`` → the
  section without ``enable``, with the strategies
  ``[LessThanOrEqualToFinalShare, LessThanInitialShare]`` when it had none.
* ``waitForPodsReady.enable: true`` → the section without ``enable``, with
  v1beta1's defaults written out where v1beta2's differ (``timeout: 5m``,
  ``blockAdmission: true``).
* ``waitForPodsReady`` absent or ``enable: false`` (off in v1beta1): v1beta2
  turns it on when the section is absent (Kueue's v1beta2 defaulting creates
  it), so the file keeps it off with the feature gate
  ``DisableWaitForPodsReady: true`` and says so in a warning.
* ``queueVisibility`` (removed in v1beta2) and
  ``integrations.podOptions`` (deprecated, ignored) are dropped with a
  warning.

Everything else is copied as written.  The function is pure and never
mutates its input.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from scheduler.api.config_fields import QUEUE_VISIBILITY_REPLACEMENT
from scheduler.api.convert._common import ConversionError, Obj, Warnings, deep
from scheduler.api.refs import CONFIG_GROUP, CONFIG_V1BETA1, CONFIG_V1BETA2

__all__ = ["CONFIG_V1BETA1", "CONFIG_V1BETA2", "configuration_up"]

DEFAULT_STRATEGIES: Final = ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
V1BETA1_PODS_READY_TIMEOUT: Final = "5m"
DISABLE_PODS_READY_GATE: Final = "DisableWaitForPodsReady"


def configuration_up(obj: Mapping[str, Any], warnings: Warnings) -> Obj:
    """A ``v1beta1`` Configuration as ``v1beta2`` (see the module docstring): pure.

    Raises :class:`ConversionError` naming the field when a section that must
    be read has the wrong type; appends to ``warnings`` what was dropped.
    """
    if obj.get("kind") != "Configuration":
        raise ConversionError(
            "kind", f'{CONFIG_GROUP} has no kind "{obj.get("kind")}"; only Configuration'
        )
    out: Obj = {}
    for key, value in obj.items():
        if key == "queueVisibility":
            warnings.append(
                f"queueVisibility was removed in v1beta2 ({QUEUE_VISIBILITY_REPLACEMENT}); dropped"
            )
        elif key == "fairSharing":
            fair = _fair_sharing(value)
            if fair is not None:
                out[key] = fair
        elif key == "waitForPodsReady":
            ready = _wait_for_pods_ready(value)
            if ready is not None:
                out[key] = ready
        elif key == "integrations":
            out[key] = _integrations(value, warnings)
        else:
            out[key] = deep(value)
    out["apiVersion"] = CONFIG_V1BETA2
    if "waitForPodsReady" not in out:
        _keep_pods_ready_off(out, warnings)
    return out


def _section(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConversionError(path, "must be an object")
    return value


def _enabled(section: Mapping[str, Any], path: str) -> bool:
    enable = section.get("enable", False)
    if enable is None:
        return False
    if not isinstance(enable, bool):
        raise ConversionError(f"{path}.enable", "must be true or false")
    return enable


def _fair_sharing(value: Any) -> Obj | None:
    section = _section(value, "fairSharing")
    if not _enabled(section, "fairSharing"):
        return None
    out = {key: deep(item) for key, item in section.items() if key != "enable"}
    if not out.get("preemptionStrategies"):
        out["preemptionStrategies"] = list(DEFAULT_STRATEGIES)
    return out


def _wait_for_pods_ready(value: Any) -> Obj | None:
    section = _section(value, "waitForPodsReady")
    if not _enabled(section, "waitForPodsReady"):
        return None
    out = {key: deep(item) for key, item in section.items() if key != "enable"}
    if out.get("timeout") is None:
        out["timeout"] = V1BETA1_PODS_READY_TIMEOUT
    if out.get("blockAdmission") is None:
        out["blockAdmission"] = True
    return out


def _integrations(value: Any, warnings: Warnings) -> Obj:
    section = _section(value, "integrations")
    if "podOptions" in section:
        warnings.append(
            "integrations.podOptions was deprecated and is not in v1beta2; dropped "
            "(managedJobsNamespaceSelector chooses the namespaces whose pods are managed)"
        )
    return {key: deep(item) for key, item in section.items() if key != "podOptions"}


def _keep_pods_ready_off(out: Obj, warnings: Warnings) -> None:
    gates = _section(out.get("featureGates"), "featureGates")
    if DISABLE_PODS_READY_GATE in gates:
        return
    out["featureGates"] = {**deep(dict(gates)), DISABLE_PODS_READY_GATE: True}
    warnings.append(
        "waitForPodsReady was off (no enable: true); v1beta2 turns it on when the section is "
        f"absent, so featureGates.{DISABLE_PODS_READY_GATE}: true keeps it off (remove the gate "
        "to have it on)"
    )
