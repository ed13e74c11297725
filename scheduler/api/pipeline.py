"""The admission pipeline, shared by the webhook and
``kuota validate``.

One function, :func:`review`, takes an object exactly as a user wrote it (any
served version) and answers what the API server plus kuota's webhooks would:
the violations, in the documented order, and — when there are none — the
object as it would be stored (converted to ``v1beta2`` and defaulted).
Because both the webhook and the CLI call this function, a CI pipeline reads
the same message, byte for byte, as ``kubectl apply`` does.

Order (docs/validation.md#order-of-processing):

1. legacy input (``v1alpha1``/``v1alpha2``) runs the legacy rules; any failure
   stops there, since conversion needs a valid legacy object;
2. legacy and ``v1beta1`` input is converted to ``v1beta2`` (``v1beta1``
   ClusterQueues are checked for CQ-V3 first);
3. defaults: the create-only mutations on CREATE, schema defaults always;
4. every rule of the kind; ``v1beta1`` violations are reported at the paths
   the user wrote (``spec.cohort``, ``spec.admissionChecks[i]``).

A Configuration file (``config.kueue.x-k8s.io``) takes the same road: a
``v1beta1`` one is converted to ``v1beta2`` first (its conversion warnings
kept), then every configuration rule runs, and the answer also carries the
warnings of :func:`~scheduler.api.validation.configuration.check_configuration`
(the fields kuota accepts and does not act on).  The processes read their
Configuration through this function too (:mod:`scheduler.api.config_file`),
so ``kuota validate`` and a starting process judge a file alike.

``gates`` are the feature gates the rules read (the webhook passes its
Configuration's ``featureGates``; absent, kuota's defaults).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from scheduler.api.convert import (
    ConversionError,
    configuration_to_v1beta2,
    to_hub,
    v1beta1_report_path,
)
from scheduler.api.defaults import apply_create_defaults, apply_schema_defaults
from scheduler.api.field import FieldError
from scheduler.api.refs import CONFIG_GROUP, CONFIG_V1BETA1, KUEUE_GROUP
from scheduler.api.refs import V1BETA2 as HUB
from scheduler.api.validation import GATED, NAMESPACED, VALIDATORS
from scheduler.api.validation.configuration import check_configuration
from scheduler.api.validation.not_acted_on import object_warnings

Operation = Literal["CREATE", "UPDATE"]
CONVERTIBLE_VERSIONS = ("v1alpha1", "v1alpha2", "v1beta1")
NAMESPACED_KINDS = frozenset({"LocalQueue", "Queue", "Workload"})


class UnsupportedKind(ValueError):
    """An object kuota does not validate (the CLI notes it, the webhook answers 400)."""


@dataclass(frozen=True)
class Review:
    """The answer for one object: who it is, what is wrong, what would be stored."""

    api_version: str
    kind: str
    name: str | None
    namespace: str | None
    errors: tuple[FieldError, ...]
    stored: dict[str, Any] | None
    """The v1beta2 (or batch/v1, Configuration) object after defaulting; None when invalid."""
    warnings: tuple[str, ...] = ()
    """The fields kuota accepts and does not act on (for a Configuration, also what its
    conversion dropped): the webhook's admission warnings, ``kuota validate``'s."""

    @property
    def valid(self) -> bool:
        return not self.errors


def _identity(raw: Mapping[str, Any]) -> tuple[str, str, str | None, str | None]:
    api_version = raw.get("apiVersion")
    kind = raw.get("kind")
    metadata = raw.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else None
    if name is None and isinstance(metadata.get("generateName"), str):
        name = metadata["generateName"]
    namespace = metadata.get("namespace") if isinstance(metadata.get("namespace"), str) else None
    return (
        api_version if isinstance(api_version, str) else "",
        kind if isinstance(kind, str) else "",
        name,
        namespace,
    )


def is_supported(raw: Mapping[str, Any]) -> bool:
    """Pure: whether :func:`review` knows this apiVersion/kind."""
    api_version, kind, _, _ = _identity(raw)
    if (api_version, kind) in VALIDATORS or (api_version, kind) == (
        CONFIG_V1BETA1,
        "Configuration",
    ):
        return True
    group, _, version = api_version.rpartition("/")
    return (
        group == KUEUE_GROUP
        and version in CONVERTIBLE_VERSIONS
        and (HUB, _hub_kind(kind)) in VALIDATORS
    )


def _hub_kind(kind: str) -> str:
    return "LocalQueue" if kind == "Queue" else kind


def _with_namespace(raw: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """``raw`` with ``metadata.namespace`` defaulted; a ``metadata`` that is not a map is left
    for the parser to refuse with its field path."""
    copy = dict(raw)
    found = copy.get("metadata")
    if found is not None and not isinstance(found, Mapping):
        return copy
    metadata = dict(found or {})
    metadata.setdefault("namespace", namespace)
    copy["metadata"] = metadata
    return copy


def review(
    raw: Mapping[str, Any],
    *,
    old: Mapping[str, Any] | None = None,
    operation: Operation = "CREATE",
    default_namespace: str | None = None,
    gates: Mapping[str, bool] | None = None,
) -> Review:
    """Validate one object as the admission chain would: pure.

    ``old`` is the stored object for an UPDATE (any version; it is converted
    the same way).  ``default_namespace`` fills an absent namespace of a
    namespaced kind, as kubectl does (the CLI passes ``default``).
    ``gates``: the feature gates the rules read (None: kuota's defaults).
    Raises :class:`UnsupportedKind` for objects kuota does not validate.
    """
    if not isinstance(raw, Mapping) or not is_supported(raw):
        api_version, kind, _, _ = (
            _identity(raw) if isinstance(raw, Mapping) else ("", "", None, None)
        )
        raise UnsupportedKind(f"kuota does not validate apiVersion {api_version!r} kind {kind!r}")
    api_version, kind, name, namespace = _identity(raw)
    if (
        default_namespace
        and namespace is None
        and (kind in NAMESPACED_KINDS or (api_version, kind) in NAMESPACED)
    ):
        raw = _with_namespace(raw, default_namespace)
        namespace = default_namespace

    def answer(
        errors: list[FieldError], stored: dict[str, Any] | None, notes: list[str] | None = None
    ) -> Review:
        return Review(
            api_version,
            kind,
            name,
            namespace,
            tuple(errors),
            None if errors else stored,
            () if errors else tuple(notes or ()),
        )

    if api_version.startswith(f"{CONFIG_GROUP}/"):
        return _review_configuration(raw, name, namespace)
    version = api_version.rpartition("/")[2]
    original = raw
    if api_version.startswith(f"{KUEUE_GROUP}/") and version in CONVERTIBLE_VERSIONS:
        try:
            raw = to_hub(raw)
            old = to_hub(old, check=False) if old is not None else None
        except ConversionError as failed:
            return answer(failed.errors, None)

    defaulted = apply_schema_defaults(raw)
    if operation == "CREATE":
        defaulted = apply_create_defaults(defaulted)
    key = (str(defaulted.get("apiVersion")), str(defaulted.get("kind")))
    stored_old = apply_schema_defaults(old) if old is not None else None
    errors = (
        GATED[key](defaulted, stored_old, gates=gates)
        if key in GATED
        else VALIDATORS[key](defaulted, stored_old)
    )
    if version == "v1beta1":
        errors = [
            FieldError(
                v1beta1_report_path(original, item.field), item.message, item.origin, item.rule
            )
            for item in errors
        ]
    return answer(errors, defaulted, object_warnings(key, defaulted, stored_old))


def _review_configuration(
    raw: Mapping[str, Any], name: str | None, namespace: str | None
) -> Review:
    """A Configuration file, ``v1beta1`` (converted) or ``v1beta2``: pure."""
    api_version, kind = str(raw.get("apiVersion")), str(raw.get("kind"))
    try:
        converted = configuration_to_v1beta2(raw)
    except ConversionError as failed:
        return Review(api_version, kind, name, namespace, tuple(failed.errors), None)
    errors, warnings = check_configuration(converted.object)
    stored = None if errors else dict(converted.object)
    notes = tuple(converted.warnings) + tuple(warnings)
    return Review(api_version, kind, name, namespace, tuple(errors), stored, notes)
