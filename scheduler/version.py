"""The installed distribution's version, read once from its metadata."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def kuota_version() -> str:
    try:
        return version("kuota")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+unknown"
