"""The Configuration a process starts with: read, checked, parsed (docs/configuration.md).

Every kuota process that takes ``--config`` (``kuota-scheduler``,
``kuota-webhook``, ``kuota-multikueue``, ``python -m certs bootstrap``)
reads its file through :func:`read_configuration`, which judges it with the
very rules of ``kuota validate`` (:func:`scheduler.api.pipeline.review`):

* a ``config.kueue.x-k8s.io/v1beta1`` file is converted to ``v1beta2``
  first; what the conversion drops is a warning;
* a violation of any rule, including the settings kuota refuses (rule
  ``CFG-K``: a feature kuota does not have), is a :class:`ConfigurationError`
  naming every field: the process logs it in one line and exits 1;
* every field kuota accepts without acting on it is a warning, which the
  process logs at start;
* a file without ``namespace`` means, as in Kueue, the namespace the process
  runs in (its service account's), else ``kueue-system``.

Nothing here talks to a cluster; :func:`load_configuration` is pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler.api.config import Configuration, parse_configuration
from scheduler.api.field import FieldError, error
from scheduler.api.parse import ObjectParseError
from scheduler.api.pipeline import UnsupportedKind, review
from scheduler.api.refs import CONFIG_V1BETA1, CONFIG_V1BETA2


class ConfigurationError(ValueError):
    """A Configuration no process starts with; ``errors`` name every field at fault."""

    def __init__(self, source: str, errors: list[FieldError]) -> None:
        self.source = source
        self.errors = errors
        super().__init__(self.render())

    def render(self) -> str:
        """One line: the file, then every violation (``<field>: <message>``), ``; ``-joined."""
        return f"{self.source}: invalid Configuration: " + "; ".join(
            item.render() for item in self.errors
        )


@dataclass(frozen=True)
class LoadedConfiguration:
    """A Configuration as a process uses it, and what it was told about the file."""

    config: Configuration
    raw: Mapping[str, Any]
    """The ``v1beta2`` file as checked (a ``v1beta1`` one converted): the sections the
    parser keeps raw are read from ``config.operational``."""
    warnings: tuple[str, ...] = ()
    source: str = ""


def load_configuration(raw: object, source: str = "Configuration") -> LoadedConfiguration:
    """Check and parse a Configuration as read from YAML: pure.

    Raises :class:`ConfigurationError` for anything ``kuota validate`` refuses,
    and for a document that is not a ``config.kueue.x-k8s.io`` Configuration.
    """
    if not isinstance(raw, Mapping):
        raise ConfigurationError(
            source, [error("", "a Configuration must be a YAML object", origin="K", rule="TYPE")]
        )
    if (raw.get("apiVersion"), raw.get("kind")) not in (
        (CONFIG_V1BETA2, "Configuration"),
        (CONFIG_V1BETA1, "Configuration"),
    ):
        message = (
            f"must be apiVersion {CONFIG_V1BETA2} (or {CONFIG_V1BETA1}) and kind Configuration, "
            f"not {raw.get('apiVersion')!r} {raw.get('kind')!r}"
        )
        raise ConfigurationError(source, [error("apiVersion", message, origin="K", rule="TYPE")])
    try:
        checked = review(raw)
    except UnsupportedKind as unsupported:  # not reached: the version was checked above
        raise ConfigurationError(source, [error("apiVersion", str(unsupported))]) from None
    if checked.errors or checked.stored is None:
        raise ConfigurationError(source, list(checked.errors))
    try:
        config = parse_configuration(checked.stored)
    except ObjectParseError as failed:
        raise ConfigurationError(source, list(failed.errors)) from None
    return LoadedConfiguration(
        config=config,
        raw=checked.stored,
        warnings=checked.warnings + config.warnings,
        source=source,
    )


SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
"""Where a pod reads its own namespace (Kueue's default ``namespace``)."""


def own_namespace(path: Path = SERVICE_ACCOUNT_NAMESPACE) -> str | None:
    """The namespace this process runs in, when it runs in a pod (reads a file)."""
    try:
        found = path.read_text().strip()
    except OSError:
        return None
    return found or None


def read_configuration(
    path: Path, *, namespace_file: Path = SERVICE_ACCOUNT_NAMESPACE
) -> LoadedConfiguration:
    """:func:`load_configuration` of a YAML file (reads it); raises :class:`ConfigurationError`.

    An absent ``namespace`` is the pod's own (``namespace_file``), as Kueue defaults it.
    """
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as failed:
        raise ConfigurationError(
            str(path), [error("", f"cannot read the file: {failed.strerror or failed}")]
        ) from None
    except yaml.YAMLError as failed:
        raise ConfigurationError(str(path), [error("", f"invalid YAML: {failed}")]) from None
    if isinstance(raw, dict) and "namespace" not in raw:
        namespace = own_namespace(namespace_file)
        if namespace is not None:
            raw = {**raw, "namespace": namespace}
    return load_configuration(raw, str(path))
