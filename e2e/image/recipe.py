"""What kuota's image is made of, in one place.

The Dockerfile at the repository root and the Docker-free build of
:mod:`e2e.image.build` describe the same image: Debian bookworm's own
``python3`` (3.11), a virtual environment in ``/opt/kuota`` with kuota and its
runtime dependencies only, a non-root user 65532 and no shell entry point.
The constants below are that description for the Docker-free build; a unit
test reads the Dockerfile and checks that it says the same, so the two cannot
drift apart unnoticed.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

SUITE = "bookworm"
PYTHON_VERSION = "3.11"  # bookworm's python3; the wheels are fetched for it
# Runtime packages of the final image; the build stage adds python3-venv
# (ensurepip) and removes it again, as the Dockerfile's two stages do.
RUNTIME_PACKAGES = ("python3",)
BUILD_PACKAGES = ("python3-venv",)
VENV = "/opt/kuota"
UID = 65532
GID = 65532
USER_NAME = "kuota"
WORKDIR = "/tmp"
ENV = {
    "PATH": f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}
CMD = ("kuota-scheduler", "--help")
EXPOSED_PORTS = (9443, 8080, 8081)
# The package sources that go into the wheel (setuptools' packages.find).
PACKAGES = ("scheduler", "webhook", "certs")


def version() -> str:
    """Pure apart from reading pyproject.toml: kuota's version, the image tag."""
    with open(REPO_ROOT / "pyproject.toml", "rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def reference() -> str:
    """The fully qualified name container runtimes give ``kuota:<version>``."""
    return f"docker.io/library/kuota:{version()}"
