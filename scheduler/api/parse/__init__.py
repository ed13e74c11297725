"""Raw ``kueue.x-k8s.io/v1beta2`` objects (dicts from YAML/JSON) → typed models.

Parse once, at the boundary: the webhook, the CLI loader and the informers
call ``parse_object`` (or ``parse_<kind>``) and everything behind them works
on frozen models with the schema defaults applied.  Any input shape is
answered, never crashed on: a model, or ``ObjectParseError`` carrying every
type error with its field path and, when the object was a map, the
best-effort ``partial`` model (fields with type errors left at their
defaults), so validation can still run the rules that do not need them
(docs/validation.md#order-of-processing, step 1).

Only ``v1beta2`` shapes are read here; older versions are converted to this
shape first by the conversion layer.  ``parse_object`` also accepts the
``config.kueue.x-k8s.io/v1beta2`` ``Configuration`` (see
``scheduler.api.config``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, Union

from scheduler.api.field import FieldError, FieldPath, ParseError, error
from scheduler.api.models import (
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    KueueObject,
    LocalQueue,
    MultiKueueCluster,
    MultiKueueConfig,
    ResourceFlavor,
    Topology,
    Workload,
    WorkloadPriorityClass,
)
from scheduler.api.parse.kinds import MODELS, build
from scheduler.api.parse.reader import Reader, describe, spelled
from scheduler.api.parse.workload import parse_pod_template
from scheduler.api.quantity import Quantity
from scheduler.api.refs import CONFIG_GROUP, KUEUE_GROUP, KUEUE_KINDS, V1BETA2

if TYPE_CHECKING:  # avoids an import cycle at run time
    from scheduler.api.config import Configuration

T = TypeVar("T")


class ObjectParseError(ParseError):
    """``ParseError`` plus the best-effort model built despite the errors (or ``None``)."""

    def __init__(self, errors: list[FieldError], partial: object | None = None) -> None:
        super().__init__(errors)
        self.partial = partial


def _type_error(message: str, field: str = "") -> ObjectParseError:
    return ObjectParseError([error(field, message, origin="S", rule="TYPE")])


def _parse_kind(raw: object, kind: str) -> Any:
    if not isinstance(raw, Mapping):
        raise _type_error(f"a {kind} must be an object, not {describe(raw)}")
    reader = Reader()
    model = build(kind, reader, reader.as_object(raw, FieldPath()) or {})
    if reader.errors:
        raise ObjectParseError(reader.errors, model)
    return model


def parse_resource_flavor(raw: Mapping[str, Any]) -> ResourceFlavor:
    """Parse a v1beta2 ResourceFlavor; raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "ResourceFlavor")  # type: ignore[no-any-return]


def parse_cluster_queue(raw: Mapping[str, Any]) -> ClusterQueue:
    """Parse a v1beta2 ClusterQueue (defaults applied); raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "ClusterQueue")  # type: ignore[no-any-return]


def parse_local_queue(raw: Mapping[str, Any]) -> LocalQueue:
    """Parse a v1beta2 LocalQueue; raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "LocalQueue")  # type: ignore[no-any-return]


def parse_cohort(raw: Mapping[str, Any]) -> Cohort:
    """Parse a v1beta2 Cohort; raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "Cohort")  # type: ignore[no-any-return]


def parse_workload(raw: Mapping[str, Any]) -> Workload:
    """Parse a v1beta2 Workload (defaults applied); raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "Workload")  # type: ignore[no-any-return]


def parse_workload_priority_class(raw: Mapping[str, Any]) -> WorkloadPriorityClass:
    """Parse a v1beta2 WorkloadPriorityClass; raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "WorkloadPriorityClass")  # type: ignore[no-any-return]


def parse_admission_check(raw: Mapping[str, Any]) -> AdmissionCheck:
    """Parse a v1beta2 AdmissionCheck; raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "AdmissionCheck")  # type: ignore[no-any-return]


def parse_multikueue_config(raw: Mapping[str, Any]) -> MultiKueueConfig:
    """Parse a v1beta2 MultiKueueConfig; raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "MultiKueueConfig")  # type: ignore[no-any-return]


def parse_multikueue_cluster(raw: Mapping[str, Any]) -> MultiKueueCluster:
    """Parse a v1beta2 MultiKueueCluster (default location type Secret); raises
    ``ObjectParseError``: pure.
    """
    return _parse_kind(raw, "MultiKueueCluster")  # type: ignore[no-any-return]


def parse_topology(raw: Mapping[str, Any]) -> Topology:
    """Parse a v1beta2 Topology; raises ``ObjectParseError``: pure."""
    return _parse_kind(raw, "Topology")  # type: ignore[no-any-return]


ParsedObject = Union[KueueObject, "Configuration"]


def parse_object(raw: object) -> ParsedObject:
    """Parse any v1beta2 Kueue object or a v1beta2 Configuration, by apiVersion/kind: pure.

    Raises ``ObjectParseError`` for anything else (not a map, another group
    or version, an unknown kind, or type errors in a known kind).
    """
    if not isinstance(raw, Mapping):
        raise _type_error(f"an object must be a map with apiVersion and kind, not {describe(raw)}")
    api_version = raw.get("apiVersion")
    kind = raw.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise _type_error(
            f"must be a string such as {V1BETA2}, not {spelled(api_version)}", "apiVersion"
        )
    if not isinstance(kind, str) or not kind:
        raise _type_error(f"must be a string naming the kind, not {spelled(kind)}", "kind")
    group, _, version = api_version.rpartition("/")
    if group == CONFIG_GROUP:
        from scheduler.api.config import parse_configuration

        if version != "v1beta2" or kind != "Configuration":
            raise _type_error(
                f'unsupported {api_version} kind "{kind}": only v1beta2 Configuration is read here '
                "(convert v1beta1 first)",
                "apiVersion" if version != "v1beta2" else "kind",
            )
        return parse_configuration(raw)
    if group != KUEUE_GROUP:
        raise _type_error(
            f'unsupported apiVersion "{api_version}": expected {V1BETA2}', "apiVersion"
        )
    if version != "v1beta2":
        raise _type_error(
            f'"{api_version}" must be converted to {V1BETA2} before it is parsed', "apiVersion"
        )
    if kind not in MODELS:
        raise _type_error(
            f'unsupported kind "{kind}" in {V1BETA2}: use one of {", ".join(KUEUE_KINDS)}', "kind"
        )
    return _parse_kind(raw, kind)  # type: ignore[no-any-return]


def parse_pod_requests(pod: Mapping[str, Any]) -> Mapping[str, Quantity]:
    """The requests a Pod is scheduled with (containers, init containers, pod-level
    requests, overhead: the rule of ``effective_pod_requests``); raises ParseError: pure."""
    spec = pod.get("spec")
    reader = Reader()
    template = parse_pod_template(
        reader, {"spec": spec if isinstance(spec, Mapping) else {}}, FieldPath(())
    )
    if reader.errors:
        raise ParseError(reader.errors)
    return {str(name): value for name, value in template.requests.items()}


PARSERS: Mapping[str, Callable[[Mapping[str, Any]], Any]] = {
    "ResourceFlavor": parse_resource_flavor,
    "ClusterQueue": parse_cluster_queue,
    "LocalQueue": parse_local_queue,
    "Cohort": parse_cohort,
    "Workload": parse_workload,
    "WorkloadPriorityClass": parse_workload_priority_class,
    "AdmissionCheck": parse_admission_check,
    "MultiKueueConfig": parse_multikueue_config,
    "MultiKueueCluster": parse_multikueue_cluster,
    "Topology": parse_topology,
}

__all__ = [
    "ObjectParseError",
    "PARSERS",
    "ParseError",
    "parse_admission_check",
    "parse_cluster_queue",
    "parse_cohort",
    "parse_local_queue",
    "parse_multikueue_cluster",
    "parse_multikueue_config",
    "parse_object",
    "parse_pod_requests",
    "parse_resource_flavor",
    "parse_topology",
    "parse_workload",
    "parse_workload_priority_class",
]
