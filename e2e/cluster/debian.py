"""Install the Debian packages a build or the real node needs, when they are missing.

``make test`` runs on fresh machines (root, Debian's package archive
reachable), so what the image build (mmdebstrap) and the real node
(containerd, runc, CNI plugins, iptables) need is installed by the project's
own code, the way a person would: ``apt-get install``.  Idempotent: nothing
runs when every binary is there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


class PackagesMissing(RuntimeError):
    """Needed packages are missing and cannot be installed here (not root)."""


def missing(binaries: Mapping[str, str]) -> list[str]:
    """The packages whose binary (a name on PATH, or an absolute path) is absent."""
    return sorted(
        {
            package
            for binary, package in binaries.items()
            if not (Path(binary).exists() if binary.startswith("/") else shutil.which(binary))
        }
    )


def ensure(binaries: Mapping[str, str]) -> None:
    """``apt-get install`` the packages of ``binaries`` ({binary: package}) that are missing."""
    packages = missing(binaries)
    if not packages:
        return
    if os.geteuid() != 0:
        raise PackagesMissing(f"install as root: apt-get install -y {' '.join(packages)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print(f"[kuota-tools] apt-get install {' '.join(packages)}", file=sys.stderr, flush=True)
    for argv in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
    ):
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise PackagesMissing(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
