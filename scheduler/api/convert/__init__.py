"""Conversion between ``kueue.x-k8s.io`` versions, with v1beta2 as the hub.

kuota reads ``v1alpha1``, ``v1alpha2``, ``v1beta1`` and ``v1beta2`` manifests
and stores ``v1beta2`` (docs/api-differences.md#api-versions-served).  Every
conversion goes through the hub:
``convert(obj, "v1alpha1")`` on a v1beta1 object is ``from_hub(to_hub(obj),
"v1alpha1")``.  The functions work on raw JSON-like dicts and never mutate
their input.  The ``config.kueue.x-k8s.io`` Configuration file has its own,
one-way step, ``v1beta1`` → ``v1beta2`` (:func:`configuration_to_v1beta2`).

Guarantees (docs/api-differences.md#conversion-annotations):

* old → v1beta2 → old gives the object back, up to quantity spelling (legacy
  quantities are written in canonical form) and fields the legacy defaulting
  fills (a flavor without a name is ``default``, a missing ``min`` is ``0``,
  an empty queueing strategy is ``BestEffortFIFO``);
* v1beta2 → old → v1beta2 gives back the spec up to values equal to v1beta2
  defaults (which defaulting re-creates) and quantity spelling; status is
  recomputed by the controller and only partly kept;
* v1beta2 → old, a field the old version can express changed there (what
  ``kubectl apply`` of an old manifest does), → v1beta2 keeps the change: what
  an annotation kept never overrides it.

What one side cannot say is kept in the ``conversion.kuota.io/…-fields``
annotations (see :mod:`scheduler.api.convert.annotation_store`).  Legacy input is
checked with the legacy rules first (docs/validation.md#order-of-processing): an object that fails
them raises :class:`ConversionError` carrying every violation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from scheduler.api.convert import annotation_store as store
from scheduler.api.convert._common import (
    GROUP,
    HUB_VERSION,
    LEGACY_VERSIONS,
    VERSIONS,
    ConversionError,
    Obj,
    Version,
    Warnings,
    deep,
    kind_of,
    normalize_version,
    version_of,
)
from scheduler.api.convert.clusterqueue import cluster_queue_down, cluster_queue_up
from scheduler.api.convert.configuration import (
    CONFIG_V1BETA1,
    CONFIG_V1BETA2,
    configuration_up,
)
from scheduler.api.convert.localqueue import local_queue_down, local_queue_up
from scheduler.api.convert.resourceflavor import resource_flavor_down, resource_flavor_up
from scheduler.api.convert.v1beta1 import v1beta1_down, v1beta1_report_path, v1beta1_up
from scheduler.api.convert.workload import workload_down, workload_up
from scheduler.api.validation_legacy import validate_legacy

__all__ = [
    "GROUP",
    "HUB_VERSION",
    "VERSIONS",
    "ConversionError",
    "ConversionResult",
    "store",
    "configuration_to_v1beta2",
    "convert",
    "convert_owned",
    "convert_with_warnings",
    "from_hub",
    "legacy_form_warning",
    "to_hub",
    "v1beta1_report_path",
]

LegacyConverter = Callable[[Mapping[str, Any], str, Warnings], Obj]

_LEGACY_UP: Final[Mapping[str, LegacyConverter]] = {
    "ClusterQueue": cluster_queue_up,
    "ResourceFlavor": resource_flavor_up,
    "LocalQueue": local_queue_up,
    "Queue": local_queue_up,
    "Workload": workload_up,
}
_LEGACY_DOWN: Final[Mapping[str, LegacyConverter]] = {
    "ClusterQueue": cluster_queue_down,
    "ResourceFlavor": resource_flavor_down,
    "LocalQueue": local_queue_down,
    "Workload": workload_down,
}


@dataclass(frozen=True)
class ConversionResult:
    """A converted object and the warnings a user should see about it."""

    object: Obj
    warnings: list[str] = field(default_factory=list)


def to_hub(obj: Mapping[str, Any], *, check: bool = True) -> Obj:
    """Convert ``obj`` (any supported version) to v1beta2: pure.

    With ``check`` (the default) legacy objects must pass the legacy rules and
    v1beta1 ClusterQueues CQ-V3; otherwise ConversionError lists the violations.
    """
    return _to_hub(obj, [], check=check)


def from_hub(obj: Mapping[str, Any], version: str) -> Obj:
    """Convert a v1beta2 object to ``version`` (``v1alpha1`` … or
    ``kueue.x-k8s.io/v1beta1``): pure.
    """
    return _from_hub(obj, normalize_version(version, "version"), [])


def convert(obj: Mapping[str, Any], to_version: str) -> Obj:
    """Convert ``obj`` to ``to_version`` through the v1beta2 hub: pure."""
    return convert_with_warnings(obj, to_version).object


def convert_with_warnings(
    obj: Mapping[str, Any], to_version: str, *, check: bool = True
) -> ConversionResult:
    """Like :func:`convert`, and also return the warnings: pure."""
    target = normalize_version(to_version, "version")
    warnings: Warnings = []
    source = version_of(obj)
    if source == target:
        result = deep(dict(obj))
        if check and source != HUB_VERSION:
            _check(obj)
        return ConversionResult(result, warnings)
    if source == HUB_VERSION:
        # _from_hub copies what it reads: no hub copy first.
        return ConversionResult(_from_hub(obj, target, warnings), warnings)
    hub = _to_hub(obj, warnings, check=check)
    if target == HUB_VERSION:
        return ConversionResult(hub, warnings)  # already a fresh object: no second copy
    return ConversionResult(_from_hub(hub, target, warnings), warnings)


def convert_owned(obj: dict[str, Any], to_version: str) -> Obj:
    """Like :func:`convert_with_warnings` unchecked, for a caller that gives ``obj`` up.

    The conversion webhook's objects are its request's own parsed JSON, used once:
    between ``v1beta2`` and ``v1beta1`` (the versions a cluster serves by default)
    the result takes ``obj``'s values over instead of copying them, and an object
    already in ``to_version`` is the answer itself.  ``obj`` must not be used
    afterwards.  Every other pair goes through :func:`convert_with_warnings`.
    """
    target = normalize_version(to_version, "version")
    source = version_of(obj)
    if source == target:
        return obj
    if (source, target) == (HUB_VERSION, "v1beta1"):
        return v1beta1_down(obj, kind_of(obj), [], owned=True)
    if (source, target) == ("v1beta1", HUB_VERSION):
        return v1beta1_up(obj, kind_of(obj), [], owned=True)
    return convert_with_warnings(obj, to_version, check=False).object


def configuration_to_v1beta2(obj: Mapping[str, Any]) -> ConversionResult:
    """A ``config.kueue.x-k8s.io`` Configuration file, ``v1beta1`` or ``v1beta2``, as
    ``v1beta2`` (docs/configuration.md#versions; :mod:`scheduler.api.convert.configuration`): pure.

    No API server converts a Configuration (it is a file, not an API object),
    so this is the one place its versions meet.
    """
    api_version = obj.get("apiVersion")
    if api_version == CONFIG_V1BETA2:
        return ConversionResult(deep(dict(obj)))
    if api_version != CONFIG_V1BETA1:
        raise ConversionError(
            "apiVersion",
            f"unsupported version {api_version!r}: a Configuration is {CONFIG_V1BETA1} or "
            f"{CONFIG_V1BETA2}",
        )
    warnings: Warnings = []
    return ConversionResult(configuration_up(obj, warnings), warnings)


def _check(obj: Mapping[str, Any]) -> None:
    errors = validate_legacy(obj)
    if errors:
        first = errors[0]
        raise ConversionError(first.field, first.message, errors)


def _to_hub(obj: Mapping[str, Any], warnings: Warnings, *, check: bool) -> Obj:
    version = version_of(obj)
    kind = kind_of(obj)
    if version == HUB_VERSION:
        return deep(dict(obj))
    if check:
        _check(obj)
    if version == "v1beta1":
        return v1beta1_up(obj, kind, warnings)
    converter = _LEGACY_UP.get(kind)
    if converter is None:
        raise ConversionError(
            "kind",
            f'{GROUP}/{version} has no kind "{kind}"; legacy kinds are ClusterQueue, '
            "ResourceFlavor, LocalQueue and Workload",
        )
    result = converter(obj, version, warnings)
    warnings.insert(0, legacy_form_warning(version, kind))
    return result


def legacy_form_warning(version: str, kind: str) -> str:
    """The first warning of every legacy object's conversion to the hub: pure.

    ``kuota convert`` leaves it out: there, converting is what was asked for.
    """
    return f"{GROUP}/{version} {kind} is a legacy form; it was converted to {HUB_VERSION}"


def _from_hub(obj: Mapping[str, Any], version: Version, warnings: Warnings) -> Obj:
    source = version_of(obj)
    if source != HUB_VERSION:
        raise ConversionError(
            "apiVersion",
            f"from_hub needs a {GROUP}/{HUB_VERSION} object, got {obj.get('apiVersion')}",
        )
    kind = kind_of(obj)
    if version == HUB_VERSION:
        return deep(dict(obj))
    if version == "v1beta1":
        return v1beta1_down(obj, kind, warnings)
    converter = _LEGACY_DOWN.get(kind)
    if converter is None or version not in LEGACY_VERSIONS:
        raise ConversionError(
            "kind",
            f'{GROUP}/{version} has no kind "{kind}"; legacy kinds are ClusterQueue, '
            "ResourceFlavor, LocalQueue and Workload",
        )
    return converter(obj, version, warnings)
