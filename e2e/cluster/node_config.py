"""The real node's configuration files, as pure functions of their paths.

containerd, CNI, kubelet and kube-proxy each get a configuration that keeps
every file under the node's directory and every address inside the cluster's
network namespace; :mod:`e2e.cluster.realnode` writes them.  Why each
setting is there is said next to the setting (see also docs/testing.md#the-real-node).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml

from .netns import NODE_IP, POD_CIDR
from .node_tools import PAUSE_REFERENCE

NODE_NAME = "kuota-real-0"
NODE_LABELS = {"type": "real", "kuota.test/real-node": "true"}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(server: str, ca: Path, cert: bytes, key: bytes, user: str) -> str:
    """Pure apart from reading the CA file: a kubeconfig with embedded credentials."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "local",
                    "cluster": {
                        "server": server,
                        "certificate-authority-data": _b64(ca.read_bytes()),
                    },
                }
            ],
            "users": [
                {
                    "name": user,
                    "user": {"client-certificate-data": _b64(cert), "client-key-data": _b64(key)},
                }
            ],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
            "current-context": "local",
        }
    )


def containerd_config(directory: Path, socket: Path, cni_conf: Path) -> str:
    """Pure: containerd's config, everything under ``directory``."""
    return f"""version = 2
root = "{directory}/containerd/root"
state = "{directory}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "{socket}"

[ttrpc]
  address = "{socket}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{directory}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{PAUSE_REFERENCE}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{cni_conf}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "{directory}/runc"
"""


def cni_config(network: str, ipam_dir: Path) -> dict[str, Any]:
    """Pure: a bridge network for the node's pods, IPAM state in ``ipam_dir``."""
    return {
        "cniVersion": "1.0.0",
        "name": network,
        "plugins": [
            {
                "type": "bridge",
                "bridge": "cni0",
                "isGateway": True,
                "isDefaultGateway": True,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "dataDir": str(ipam_dir),
                    "ranges": [[{"subnet": POD_CIDR}]],
                },
            }
        ],
    }


def kubelet_config(
    directory: Path, socket: Path, cgroup_root: str, ca: Path, cert: Path, key: Path
) -> dict[str, Any]:
    """Pure: the KubeletConfiguration, with authentication by the cluster CA."""
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": NODE_IP,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "tlsCertFile": str(cert),
        "tlsPrivateKeyFile": str(key),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca)},
        },
        "authorization": {"mode": "Webhook"},
        "containerRuntimeEndpoint": f"unix://{socket}",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": cgroup_root,
        "failCgroupV1": False,
        "failSwapOn": False,
        "resolvConf": "",
        "podLogsDir": str(directory / "pod-logs"),
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "imagefs.available": "1%",
            "nodefs.inodesFree": "1%",
        },
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "maxPods": 30,
    }


def kube_proxy_config(kubeconfig: Path) -> dict[str, Any]:
    """Pure: kube-proxy in iptables mode, touching no global conntrack setting."""
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "mode": "iptables",
        "hostnameOverride": NODE_NAME,
        "clusterCIDR": POD_CIDR,
        "healthzBindAddress": "127.0.0.1:10256",
        "metricsBindAddress": "127.0.0.1:10249",
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
    }
