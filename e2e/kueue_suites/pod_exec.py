"""``kubectl exec`` into the suites' pods on kwok's nodes: what the agnhost container would answer.

Some of Kueue's specs exec a shell in a pod (``test/util/e2e.go``):

- ``curl -s -k -H "Authorization: Bearer $(cat <token file>)" https://<metrics
  Service>.<namespace>.svc.cluster.local:8443/metrics`` from a curl pod in
  ``kueue-system`` running as ``kueue-controller-manager``: reads kuota's
  metrics through its Service, authenticated as that ServiceAccount;
- ``curl "http://<pod IP>:8080/readyz"`` and then
  ``curl "http://<pod IP>:8080/exit?code=N&..."``: asks agnhost's ``netexec``
  to end its container with exit code ``N``.

kwok runs no container, so its kubelet API (``e2e.cluster.controlplane``)
execs the command on the machine, inside the cluster's network namespace, with
the environment a ``ClusterExec`` gives (:func:`cluster_execs`).  There ``/bin/sh``
finds this module's ``curl`` and ``cat`` first on ``PATH``; they stand in for
what the pod's network, its mounted token and agnhost would do:

- a ``*.svc`` / ``*.svc.cluster.local`` URL is sent to a ready endpoint of that
  Service (cluster DNS and the Service proxy played by reading the Service and
  its EndpointSlices), so the answer is kuota's own;
- the token file of a pod's ServiceAccount reads a token the API server mints
  for that ServiceAccount (a TokenRequest, as the kubelet does);
- ``/readyz`` of a Running pod answers ``ok``; ``/exit?code=N`` annotates the pod
  with :data:`EXIT_CODE_ANNOTATION`, and kwok's ``agnhost-exit`` stage
  (:mod:`.kwok_stages`) ends its containers with that code, as the kubelet
  would report a container that exited.

Anything else is refused with a message naming it, never answered by guess.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster.kwok_config import kwok_object
from e2e.cluster.pki import ClusterPki

EXIT_CODE_ANNOTATION = "kuota.test/agnhost-exit-code"
TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
WORKDIR_ENV = "KUOTA_POD_EXEC_CLUSTER"
SERVICE_ACCOUNT_ENV = "KUOTA_POD_EXEC_SERVICE_ACCOUNT"
CURL_COULD_NOT_CONNECT = 7
CURL_USAGE = 2
# The suites' only exec'd pods in kueue-system are their curl pods, and those
# run as Kueue's controller ServiceAccount (``serviceAccountName`` in the specs).
CURL_POD_NAMESPACE = "kueue-system"
CURL_POD_SERVICE_ACCOUNT = "kueue-system/kueue-controller-manager"


class Refused(Exception):
    """A command this stand-in does not play; the message says which part."""


@dataclass(frozen=True)
class CurlRequest:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    insecure: bool = False
    """``-k``: the server's certificate is not verified (the only way TLS is played here)."""
    silent: bool = False
    """``-s``: no error message when the connection fails."""


def parse_curl(argv: list[str]) -> CurlRequest:
    """The request a ``curl`` command line asks for (pure); unknown options are refused."""
    url = ""
    headers: dict[str, str] = {}
    insecure = silent = False
    args = iter(argv)
    for arg in args:
        if arg in ("-k", "--insecure"):
            insecure = True
        elif arg in ("-s", "--silent"):
            silent = True
        elif arg in ("-H", "--header"):
            name, _, value = next(args, "").partition(":")
            headers[name.strip()] = value.strip()
        elif arg.startswith("-"):
            raise Refused(f"curl option {arg!r} is not played")
        elif url:
            raise Refused(f"curl with two URLs ({url!r}, {arg!r}) is not played")
        else:
            url = arg
    if not url:
        raise Refused("curl without a URL")
    if url.startswith("https:") and not insecure:
        raise Refused("https without -k: verifying a Service's certificate is not played")
    return CurlRequest(url, headers, insecure=insecure, silent=silent)


def service_of(host: str) -> tuple[str, str] | None:
    """``(namespace, name)`` of a Service's cluster DNS name, None for any other host (pure)."""
    for suffix in (".svc.cluster.local", ".svc"):
        if host.endswith(suffix):
            name, _, namespace = host[: -len(suffix)].partition(".")
            if name and namespace and "." not in namespace:
                return namespace, name
    return None


def service_endpoint(
    service: dict[str, Any], slices: list[dict[str, Any]], port: int
) -> tuple[str, int]:
    """A ready ``(address, port)`` behind the Service port ``port`` (pure), as kube-proxy picks."""
    for service_port in service.get("spec", {}).get("ports") or []:
        if service_port.get("port") == port:
            break
    else:
        raise Refused(f"Service {service['metadata']['name']} has no port {port}")
    target = service_port.get("targetPort", port)
    for endpoint_slice in slices:
        numbers = [
            p["port"]
            for p in endpoint_slice.get("ports") or []
            if p.get("name", "") == service_port.get("name", "")
            or (isinstance(target, int) and p.get("port") == target)
        ]
        for endpoint in endpoint_slice.get("endpoints") or []:
            if numbers and (endpoint.get("conditions") or {}).get("ready", False):
                return endpoint["addresses"][0], numbers[0]
    raise Refused(f"Service {service['metadata']['name']} has no ready endpoint for port {port}")


def exit_code_of(query: str) -> int:
    """The exit code agnhost's ``/exit`` is asked for (pure)."""
    codes = urllib.parse.parse_qs(query).get("code", ["0"])
    try:
        return int(codes[0])
    except ValueError as exc:
        raise Refused(f"/exit with code {codes[0]!r}") from exc


class Cluster:
    """The cluster's API as its admin, from the harness's work directory."""

    def __init__(self, workdir: Path) -> None:
        config = yaml.safe_load((workdir / "admin.kubeconfig").read_text())
        self.server = config["clusters"][0]["cluster"]["server"]
        pki = ClusterPki(workdir / "pki")
        self._context = ssl.create_default_context(cafile=str(pki.ca_cert))
        self._context.load_cert_chain(str(pki.admin_cert), str(pki.admin_key))

    def call(self, method: str, path: str, body: Any = None, content_type: str = "") -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.server + path, data=data, method=method)
        request.add_header("Content-Type", content_type or "application/json")
        with urllib.request.urlopen(request, context=self._context, timeout=10) as reply:
            return json.loads(reply.read())

    def pod_with_ip(self, ip: str) -> dict[str, Any]:
        pods = self.call("GET", f"/api/v1/pods?fieldSelector=status.podIP%3D{ip}")["items"]
        running = [pod for pod in pods if pod.get("status", {}).get("phase") == "Running"]
        if not running:
            raise Refused(f"no Running pod has IP {ip}")
        return dict(running[0])


def _fetch(url: str, headers: dict[str, str], connect_to: tuple[str, int]) -> bytes:
    """GET ``url`` from ``connect_to``, as curl ``-k`` would: TLS not verified."""
    parsed = urllib.parse.urlsplit(url)
    address = f"{parsed.scheme}://{connect_to[0]}:{connect_to[1]}{parsed.path}"
    if parsed.query:
        address += "?" + parsed.query
    request = urllib.request.Request(address, headers={**headers, "Host": parsed.netloc})
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(request, context=insecure, timeout=20) as reply:
            return bytes(reply.read())
    except urllib.error.HTTPError as error:
        return bytes(error.read())


def curl(cluster: Cluster, request: CurlRequest) -> bytes:
    """What the pod's ``curl`` prints for ``request``."""
    parsed = urllib.parse.urlsplit(request.url)
    host, port = parsed.hostname or "", parsed.port or (443 if parsed.scheme == "https" else 80)
    service = service_of(host)
    if service is not None:
        namespace, name = service
        found = cluster.call("GET", f"/api/v1/namespaces/{namespace}/services/{name}")
        slices = cluster.call(
            "GET",
            f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"
            f"?labelSelector=kubernetes.io%2Fservice-name%3D{name}",
        )["items"]
        return _fetch(request.url, request.headers, service_endpoint(found, slices, port))
    pod = cluster.pod_with_ip(host)
    if parsed.path == "/readyz":
        return b"ok"
    if parsed.path == "/exit":
        code = exit_code_of(parsed.query)
        if pod["spec"].get("restartPolicy", "Always") == "Always" or (
            code != 0 and pod["spec"].get("restartPolicy") == "OnFailure"
        ):
            raise Refused("/exit of a container the kubelet would restart is not played")
        meta = pod["metadata"]
        cluster.call(
            "PATCH",
            f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
            {"metadata": {"annotations": {EXIT_CODE_ANNOTATION: str(code)}}},
            content_type="application/merge-patch+json",
        )
        return b""
    raise Refused(f"agnhost path {parsed.path!r} is not played")


def service_account_token(cluster: Cluster, service_account: str) -> bytes:
    """A token for ``namespace/name`` from the API server's TokenRequest."""
    namespace, _, name = service_account.partition("/")
    reply = cluster.call(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    )
    return str(reply["status"]["token"]).encode()


def cluster_execs(workdir: Path) -> list[dict[str, Any]]:
    """kwok's ``ClusterExec`` objects, and the ``curl`` and ``cat`` they put first on ``PATH``."""
    bin_dir = workdir / "pod-exec"
    bin_dir.mkdir(exist_ok=True)
    repo = Path(__file__).resolve().parents[2]
    for command in ("curl", "cat"):
        script = bin_dir / command
        script.write_text(
            f'#!/bin/sh\nexec {sys.executable} -m e2e.kueue_suites.pod_exec {command} "$@"\n'
        )
        script.chmod(0o755)
    env = [
        {"name": "PATH", "value": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"},
        {"name": "PYTHONPATH", "value": str(repo)},
        {"name": WORKDIR_ENV, "value": str(workdir)},
    ]
    curl_pods = [*env, {"name": SERVICE_ACCOUNT_ENV, "value": CURL_POD_SERVICE_ACCOUNT}]
    return [
        _cluster_exec("kueue-curl-pods", curl_pods, [CURL_POD_NAMESPACE]),
        _cluster_exec("agnhost-pods", env, []),
    ]


def _cluster_exec(name: str, env: list[dict[str, str]], namespaces: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"execs": [{"local": {"envs": env}}]}
    if namespaces:
        spec["selector"] = {"matchNamespaces": namespaces}
    return kwok_object("ClusterExec", name, spec)


def main(argv: list[str]) -> int:
    command, args = argv[0], argv[1:]
    if command == "cat" and args != [TOKEN_FILE]:
        os.execv("/bin/cat", ["cat", *args])
    request: CurlRequest | None = None
    try:
        cluster = Cluster(Path(os.environ[WORKDIR_ENV]))
        if command == "cat":
            service_account = os.environ.get(SERVICE_ACCOUNT_ENV)
            if not service_account:
                raise Refused(f"{TOKEN_FILE}: this pod's ServiceAccount is not known here")
            sys.stdout.buffer.write(service_account_token(cluster, service_account))
            return 0
        request = parse_curl(args)
        sys.stdout.buffer.write(curl(cluster, request))
        return 0
    except Refused as refusal:
        print(f"kuota pod exec: {refusal}", file=sys.stderr)  # the harness's, never silenced
        return CURL_USAGE
    except (OSError, urllib.error.URLError) as error:
        if request is None or not request.silent:
            print(f"kuota pod exec: {error}", file=sys.stderr)
        return CURL_COULD_NOT_CONNECT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
