"""Build kuota's image without a container engine: ``python -m e2e.image build``.

The Dockerfile's two stages, done with Debian's and Python's own tools:

1. **Base** (cached by suite, packages and apt sources): ``mmdebstrap`` makes
   a minimal Debian bookworm root filesystem with ``python3`` from the same
   apt sources as the machine itself (the Dockerfile starts from
   ``debian:bookworm-slim`` and installs the same packages with apt-get).
2. **Wheels**: the host's pip builds kuota's (pure Python) wheel and
   downloads its runtime dependencies as binary wheels for CPython 3.11 on
   bookworm's glibc; nothing inside the image touches the network.
3. **Install** in the root filesystem, under ``chroot`` inside a private
   mount namespace (``unshare --mount``: the /proc and /dev mounts vanish with
   it, even on a crash): a venv in ``/opt/kuota``, ``pip install --no-index``
   from those wheels, pip removed, ``python3-venv`` purged again (the
   Dockerfile's runtime stage never has it), user and group 65532 added.
4. **Pack**: one layer, written as an OCI archive by :mod:`e2e.image.oci`.

Differences from ``docker build`` (also in the README): one layer instead of
several; pip's wheels come from the host's pip configuration rather than
from inside the build container; package versions are whatever the apt
sources hold on the day of the build, as with the Dockerfile.

Results are cached under the tools cache (``<cache>/image/``), keyed by the
hash of every input, and built under a lock with an atomic rename, like the
control-plane tools of :mod:`e2e.cluster.tools`.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from e2e.cluster import debian
from e2e.cluster.tools import cache_root

from . import oci, recipe

BASE_REVISION = "1"  # bump when ensure_base changes what it produces (the image key
# covers this whole file already)
APT_SOURCES = ("/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.sources")))
HOST_TOOLS = {"mmdebstrap": "mmdebstrap", "unshare": "util-linux", "chroot": "coreutils"}


class ImageBuildError(RuntimeError):
    """A step of the image build failed; the message names it and shows its output."""


def image_cache() -> Path:
    return cache_root() / "image"


def _apt_sources() -> list[Path]:
    """The machine's apt sources that have content (mmdebstrap takes them as mirrors)."""
    return [Path(p) for p in APT_SOURCES if Path(p).is_file() and Path(p).read_text().strip()]


def base_key() -> str:
    """Pure apart from reading the apt sources: the cache key of the base root filesystem."""
    digest = hashlib.sha256()
    digest.update(f"{BASE_REVISION}|{recipe.SUITE}|".encode())
    digest.update(",".join(recipe.RUNTIME_PACKAGES + recipe.BUILD_PACKAGES).encode())
    for source in _apt_sources():
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def _source_files() -> Iterator[Path]:
    yield recipe.REPO_ROOT / "pyproject.toml"
    yield recipe.REPO_ROOT / "README.md"  # the package's readme
    for package in recipe.PACKAGES:
        for path in sorted((recipe.REPO_ROOT / package).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".yaml", ".json", ".typed"):
                yield path


def image_key() -> str:
    """Pure apart from reading files: the cache key of the image (base + kuota's sources)."""
    digest = hashlib.sha256(f"{base_key()}|{recipe.reference()}|".encode())
    digest.update(Path(__file__).read_bytes())
    digest.update((Path(__file__).parent / "recipe.py").read_bytes())
    for path in _source_files():
        digest.update(str(path.relative_to(recipe.REPO_ROOT)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def archive_path() -> Path:
    return image_cache() / f"kuota-{recipe.version()}-{image_key()}.oci.tar"


@contextmanager
def _lock(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(title: str, argv: list[str], **kwargs: object) -> None:
    started = time.monotonic()
    print(f"[kuota-image] {title} ...", file=sys.stderr, flush=True)
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise ImageBuildError(
            f"{title} failed (exit {done.returncode}): {' '.join(argv)}\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    print(f"[kuota-image] {title}: {time.monotonic() - started:.0f}s", file=sys.stderr, flush=True)


def _check_host() -> None:
    if os.geteuid() != 0:
        raise ImageBuildError("building the image needs root (chroot, mount namespaces)")
    try:
        debian.ensure(HOST_TOOLS)
    except debian.PackagesMissing as failure:
        raise ImageBuildError(str(failure)) from failure


def ensure_base() -> Path:
    """The cached base root filesystem tarball (mmdebstrap), built when missing."""
    target = image_cache() / f"base-{recipe.SUITE}-{base_key()}.tar"
    if target.is_file():
        return target
    partial = target.with_name(target.name + f".{os.getpid()}.partial")
    packages = ",".join(recipe.RUNTIME_PACKAGES + recipe.BUILD_PACKAGES)
    _run(
        f"mmdebstrap {recipe.SUITE} ({packages})",
        [
            "mmdebstrap",
            "--quiet",
            "--mode=root",
            "--variant=minbase",
            "--format=tar",
            f"--include={packages}",
            recipe.SUITE,
            str(partial),
            *(str(source) for source in _apt_sources()),
        ],
    )
    partial.rename(target)
    return target


# glibc 2.36 (bookworm) runs every manylinux wheel up to 2.36 (and the legacy aliases).
WHEEL_PLATFORMS = (
    *(f"manylinux_2_{minor}_x86_64" for minor in range(36, 4, -1)),
    "manylinux2014_x86_64",
    "manylinux2010_x86_64",
    "manylinux1_x86_64",
)


def _runtime_dependencies() -> list[str]:
    with open(recipe.REPO_ROOT / "pyproject.toml", "rb") as handle:
        return list(tomllib.load(handle)["project"]["dependencies"])


def _wheels(target: Path, source: Path) -> None:
    """kuota's wheel and every runtime dependency as wheels for the image's Python.

    kuota itself is pure Python, built from a copy of exactly what the
    Dockerfile copies (setuptools leaves a ``build/`` directory beside the
    sources, and stale files there would end up in the wheel).  The
    dependencies are fetched as binary wheels for CPython 3.11 on bookworm's
    glibc, whatever Python runs this build.
    """
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(recipe.REPO_ROOT / name, source / name)
    for package in recipe.PACKAGES:
        shutil.copytree(
            recipe.REPO_ROOT / package,
            source / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    _run("pip wheel kuota", [*pip, "wheel", "--no-deps", "--wheel-dir", str(target), str(source)])
    platforms = [arg for platform in WHEEL_PLATFORMS for arg in ("--platform", platform)]
    _run(
        "pip download kuota's dependencies (CPython 3.11 wheels)",
        [
            *pip,
            "download",
            "--only-binary=:all:",
            f"--python-version={recipe.PYTHON_VERSION}",
            "--implementation=cp",
            *platforms,
            "--dest",
            str(target),
            *_runtime_dependencies(),
        ],
    )


# Runs as `sh -euc SCRIPT sh ROOTFS WHEELS_DIR_IN_ROOTFS` inside `unshare --mount`.
_INSTALL_SCRIPT = """
root="$1"; wheels="$2"
mount --make-rprivate /
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
chroot "$root" /usr/bin/python3 -m venv {venv}
chroot "$root" {venv}/bin/pip install --quiet --no-index --no-cache-dir \\
    --disable-pip-version-check --find-links "$wheels" kuota
chroot "$root" {venv}/bin/pip uninstall --quiet --yes pip
chroot "$root" apt-get purge --quiet --yes --auto-remove {build_packages} >/dev/null
chroot "$root" groupadd --system --gid {gid} {user}
chroot "$root" useradd --system --uid {uid} --gid {user} --no-create-home \\
    --home-dir /nonexistent --shell /usr/sbin/nologin {user}
"""


def _install(rootfs: Path, wheels: Path) -> None:
    inside = rootfs / "tmp" / "kuota-wheels"
    shutil.copytree(wheels, inside)
    script = _INSTALL_SCRIPT.format(
        venv=recipe.VENV,
        build_packages=" ".join(recipe.BUILD_PACKAGES),
        gid=recipe.GID,
        uid=recipe.UID,
        user=recipe.USER_NAME,
    )
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
    _run(
        "install kuota into the root filesystem (chroot)",
        [
            "unshare",
            "--mount",
            "--fork",
            "sh",
            "-euc",
            script,
            "sh",
            str(rootfs),
            "/tmp/kuota-wheels",
        ],
        env=env,
    )
    shutil.rmtree(inside)


def _pack(rootfs: Path, layer: Path) -> None:
    _run(
        "tar the root filesystem",
        [
            "tar",
            "--create",
            f"--file={layer}",
            f"--directory={rootfs}",
            "--numeric-owner",
            "--sort=name",
            "--exclude=./dev/*",
            "--exclude=./proc/*",
            "--exclude=./sys/*",
            "--exclude=./tmp/*",
            "--exclude=./var/cache/apt/*",
            "--exclude=./var/lib/apt/lists/*",
            ".",
        ],
    )


def image_config() -> oci.ImageConfig:
    return oci.ImageConfig(
        reference=recipe.reference(),
        env=recipe.ENV,
        cmd=recipe.CMD,
        user=f"{recipe.UID}:{recipe.GID}",
        workdir=recipe.WORKDIR,
        exposed_ports=recipe.EXPOSED_PORTS,
    )


def build(*, force: bool = False) -> Path:
    """The image's OCI archive in the cache, built when missing (or when ``force``)."""
    target = archive_path()
    if target.is_file() and not force:
        print(f"[kuota-image] cache hit: {target}", file=sys.stderr)
        return target
    _check_host()
    started = time.monotonic()
    with _lock(image_cache()):
        if target.is_file() and not force:
            return target
        base = ensure_base()
        staging = image_cache() / f".build-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            rootfs = staging / "rootfs"
            rootfs.mkdir(parents=True)
            _wheels(staging / "wheels", staging / "source")
            _run(
                "unpack the base",
                ["tar", "--extract", "--numeric-owner", "-p", f"--file={base}", "-C", str(rootfs)],
            )
            _install(rootfs, staging / "wheels")
            _pack(rootfs, staging / "layer.tar")
            shutil.rmtree(rootfs)
            oci.write_layout(staging / "layer.tar", image_config(), staging / "layout")
            oci.archive(staging / "layout", target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        for old in image_cache().glob(f"kuota-{recipe.version()}-*.oci.tar"):
            if old != target:
                old.unlink()  # an image per source state would fill the disk
    size = target.stat().st_size / 1024**2
    print(
        f"[kuota-image] built in {time.monotonic() - started:.0f}s ({size:.0f} MiB): {target}",
        file=sys.stderr,
    )
    return target
