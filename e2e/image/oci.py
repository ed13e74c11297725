"""Write a single-layer OCI image archive from a root filesystem tarball.

An OCI image is three JSON documents and the layer, addressed by their
SHA-256 digests: the layer (a gzipped tar of the root filesystem), the
config (user, environment, command, and the layer's uncompressed digest),
the manifest (config + layers) and the ``index.json`` that names it.  These
few lines replace a container engine's ``save``; the archive loads with
``ctr images import`` and reads with ``skopeo inspect oci-archive:...``.

The index carries both the OCI ref name (the tag) and containerd's
``io.containerd.image.name`` annotation, so an import without flags already
names the image ``docker.io/library/kuota:<tag>``: the name kubelet asks for
when a pod says ``image: kuota:<tag>``.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
CONFIG_MEDIA_TYPE = "application/vnd.oci.image.config.v1+json"
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"


@dataclass(frozen=True)
class ImageConfig:
    """The runtime settings of the image (the Dockerfile's ENV, USER, CMD, ...)."""

    reference: str  # docker.io/library/kuota:0.1.0
    env: Mapping[str, str]
    cmd: Sequence[str]
    user: str
    workdir: str
    exposed_ports: Sequence[int] = ()
    entrypoint: Sequence[str] = ()
    labels: Mapping[str, str] | None = None

    @property
    def tag(self) -> str:
        return self.reference.rsplit(":", 1)[1]


def _blob(layout: Path, data: bytes) -> tuple[str, int]:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    (layout / "blobs" / "sha256" / digest.split(":", 1)[1]).write_bytes(data)
    return digest, len(data)


def _descriptor(media_type: str, digest: str, size: int, **extra: Any) -> dict[str, Any]:
    return {"mediaType": media_type, "digest": digest, "size": size, **extra}


def config_document(config: ImageConfig, diff_id: str) -> dict[str, Any]:
    """Pure: the OCI image config for one layer with uncompressed digest ``diff_id``."""
    runtime: dict[str, Any] = {
        "User": config.user,
        "Env": [f"{name}={value}" for name, value in config.env.items()],
        "Cmd": list(config.cmd),
        "WorkingDir": config.workdir,
    }
    if config.entrypoint:
        runtime["Entrypoint"] = list(config.entrypoint)
    if config.exposed_ports:
        runtime["ExposedPorts"] = {f"{port}/tcp": {} for port in config.exposed_ports}
    if config.labels:
        runtime["Labels"] = dict(config.labels)
    return {
        "architecture": "amd64",
        "os": "linux",
        "config": runtime,
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "e2e.image.build (Docker-free build of the Dockerfile)"}],
    }


def _gzip_and_digest(layer_tar: Path, target: Path) -> tuple[str, str, int]:
    """Compress ``layer_tar`` into ``target``; returns (diff_id, digest, size)."""
    uncompressed = hashlib.sha256()
    with open(layer_tar, "rb") as source, open(target, "wb") as raw:
        # mtime=0: the same layer always compresses to the same bytes.
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as packed:
            while chunk := source.read(1 << 20):
                uncompressed.update(chunk)
                packed.write(chunk)
    compressed = hashlib.sha256()
    with open(target, "rb") as written:
        while chunk := written.read(1 << 20):
            compressed.update(chunk)
    return (
        "sha256:" + uncompressed.hexdigest(),
        "sha256:" + compressed.hexdigest(),
        target.stat().st_size,
    )


def write_layout(layer_tar: Path, config: ImageConfig, layout: Path) -> str:
    """Write an OCI image layout directory; returns the manifest digest."""
    shutil.rmtree(layout, ignore_errors=True)
    (layout / "blobs" / "sha256").mkdir(parents=True)
    staging = layout / "layer.tar.gz"
    diff_id, layer_digest, layer_size = _gzip_and_digest(layer_tar, staging)
    staging.rename(layout / "blobs" / "sha256" / layer_digest.split(":", 1)[1])
    config_digest, config_size = _blob(
        layout, json.dumps(config_document(config, diff_id), sort_keys=True).encode()
    )
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": _descriptor(CONFIG_MEDIA_TYPE, config_digest, config_size),
        "layers": [_descriptor(LAYER_MEDIA_TYPE, layer_digest, layer_size)],
    }
    manifest_digest, manifest_size = _blob(layout, json.dumps(manifest, sort_keys=True).encode())
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [
            _descriptor(
                MANIFEST_MEDIA_TYPE,
                manifest_digest,
                manifest_size,
                annotations={
                    "org.opencontainers.image.ref.name": config.tag,
                    "io.containerd.image.name": config.reference,
                },
                platform={"architecture": "amd64", "os": "linux"},
            )
        ],
    }
    (layout / "index.json").write_text(json.dumps(index, sort_keys=True))
    (layout / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    return manifest_digest


def archive(layout: Path, target: Path) -> None:
    """Tar an OCI layout directory (``oci-archive`` format) into ``target``."""
    partial = target.with_name(target.name + ".partial")
    with tarfile.open(partial, "w") as tar:
        for path in sorted(layout.rglob("*")):
            info = tar.gettarinfo(str(path), arcname=str(path.relative_to(layout)))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if path.is_file():
                with open(path, "rb") as handle:
                    tar.addfile(info, handle)
            else:
                tar.addfile(info)
    partial.rename(target)


def read_archive(path: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Pure apart from reading ``path``: (index, manifest, config) of an image archive."""
    with tarfile.open(path) as tar:

        def load(name: str) -> dict[str, Any]:
            member = tar.extractfile(name)
            assert member is not None, name
            return dict(json.load(io.BytesIO(member.read())))

        index = load("index.json")
        manifest = load(f"blobs/sha256/{index['manifests'][0]['digest'].split(':', 1)[1]}")
        config = load(f"blobs/sha256/{manifest['config']['digest'].split(':', 1)[1]}")
    return index, manifest, config
