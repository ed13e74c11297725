"""``python -m certs generate | bootstrap``: kuota's webhook TLS material.

``generate`` writes ``ca.crt``, ``ca.key``, ``tls.crt``, ``tls.key`` to a
directory (reusing the CA already there unless ``--new-ca``): what the local
cluster and the tests use.  ``bootstrap`` keeps them in a Secret, injects the
CA bundle into kuota's webhook configurations and CRDs, and with ``--watch``
renews them before expiry (the alternative to cert-manager).

``bootstrap --config FILE`` takes its defaults from a Kueue Configuration
(checked first, as every kuota process checks it): ``namespace``, and
``internalCertManagement``, Kueue's own certificate management, for which
this command stands: ``webhookSecretName`` is the Secret,
``webhookServiceName`` the Service whose names the certificate carries
(Kueue's defaults, ``kueue-webhook-server-cert`` and
``kueue-webhook-service``, when the file does not name them), and
``enable: false`` (the certificates come from elsewhere, e.g. cert-manager)
makes it do nothing.  Flags override the file.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from datetime import timedelta
from pathlib import Path

from certs import files

DEFAULT_NAMESPACE = "kueue-system"
DEFAULT_SECRET = "kuota-webhook-server-cert"
DEFAULT_SERVICE = "kuota-webhook-service"


def cmd_generate(args: argparse.Namespace) -> int:
    ca = None if args.new_ca else files.load_ca(args.out)
    try:
        certificates = files.make(
            dns_names=args.dns, ip_addresses=args.ip, ca=ca, valid_days=args.days
        )
    except ValueError as invalid:
        print(f"error: {invalid}", file=sys.stderr)
        return 2
    files.write(args.out, certificates)
    print(
        f"wrote {args.out / files.CA_CERT}, {files.TLS_CERT}, {files.TLS_KEY} "
        f"(valid until {files.expires_at(certificates.serving.cert_pem):%Y-%m-%d}; "
        f"{'new' if ca is None else 'existing'} CA)"
    )
    return 0


def cmd_bootstrap(args: argparse.Namespace) -> int:
    from certs.bootstrap import BootstrapOptions, run  # needs the Kubernetes client
    from scheduler import logs
    from scheduler.api.config_file import ConfigurationError, read_configuration
    from scheduler.api.operational import cert_management

    logs.configure("info")
    log = logging.getLogger("kuota.certs")
    namespace, secret, service = DEFAULT_NAMESPACE, DEFAULT_SECRET, DEFAULT_SERVICE
    if args.config is not None:
        try:
            loaded = read_configuration(args.config)
        except ConfigurationError as invalid:
            log.error(invalid.render(), extra={"config": invalid.source})
            return 1
        managed = cert_management(loaded.config)
        if not managed.enable:
            log.info(
                "internalCertManagement.enable is false: the certificates come from elsewhere; "
                "nothing to do",
                extra={"config": str(args.config)},
            )
            return 0
        namespace = loaded.config.namespace
        secret, service = managed.secret_name, managed.service_name
    namespace = args.namespace or namespace
    options = BootstrapOptions(
        namespace=namespace,
        secret=args.secret or secret,
        dns_names=tuple(args.dns),
        ip_addresses=tuple(args.ip),
        out=args.out,
        valid_days=args.days,
        renew_before=timedelta(days=args.renew_before_days),
        kubeconfig=args.kubeconfig,
        owner_deployment=args.owner_deployment,
        webhook_configuration_prefix=args.webhook_configuration_prefix,
    )
    if not options.dns_names and not options.ip_addresses:
        options = BootstrapOptions(
            **{
                **options.__dict__,
                "dns_names": (
                    f"{service}.{namespace}.svc",
                    f"{service}.{namespace}.svc.cluster.local",
                ),
            }
        )
    return asyncio.run(run(options, watch=args.watch, interval=args.interval))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m certs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    generate = commands.add_parser(
        "generate", help="write a CA and a serving certificate to a directory"
    )
    generate.add_argument(
        "--dns", action="append", default=[], help="DNS subject alternative name (repeatable)"
    )
    generate.add_argument(
        "--ip", action="append", default=[], help="IP subject alternative name (repeatable)"
    )
    generate.add_argument(
        "--out", type=Path, required=True, help="directory for ca.crt, ca.key, tls.crt, tls.key"
    )
    generate.add_argument(
        "--days", type=int, default=90, help="validity of the serving certificate (default: 90)"
    )
    generate.add_argument(
        "--new-ca", action="store_true", help="make a new CA even if --out holds one"
    )
    generate.set_defaults(run=cmd_generate)
    boot = commands.add_parser(
        "bootstrap", help="keep the certificates in a Secret and inject the CA bundle"
    )
    boot.add_argument(
        "--config",
        type=Path,
        help="a Kueue Configuration: namespace and internalCertManagement give the defaults "
        "of --namespace, --secret and --dns",
    )
    boot.add_argument(
        "--namespace",
        default=None,
        help=f"namespace of the Secret (default: the Configuration's, else {DEFAULT_NAMESPACE})",
    )
    boot.add_argument(
        "--secret",
        default=None,
        help="Secret name (default: internalCertManagement.webhookSecretName with --config, "
        f"else {DEFAULT_SECRET})",
    )
    boot.add_argument(
        "--dns",
        action="append",
        default=[],
        help="DNS name (default: the webhook Service's names: "
        f"internalCertManagement.webhookServiceName with --config, else {DEFAULT_SERVICE})",
    )
    boot.add_argument("--ip", action="append", default=[], help="IP address (repeatable)")
    boot.add_argument(
        "--out", type=Path, help="also write the files here (the webhook's --cert-dir)"
    )
    boot.add_argument(
        "--days", type=int, default=90, help="validity of a new serving certificate (default: 90)"
    )
    boot.add_argument(
        "--renew-before-days",
        type=int,
        default=30,
        help="renew this long before expiry (default: 30)",
    )
    boot.add_argument(
        "--kubeconfig",
        type=Path,
        help="kubeconfig (default: $KUBECONFIG, else the in-cluster service account)",
    )
    boot.add_argument(
        "--owner-deployment",
        metavar="NAME",
        help="the Deployment (in --namespace) that owns the Secret: deleting it deletes the Secret",
    )
    boot.add_argument(
        "--webhook-configuration-prefix",
        default="kuota",
        metavar="PREFIX",
        help="inject into PREFIX-mutating/validating-webhook-configuration (default: kuota)",
    )
    boot.add_argument("--watch", action="store_true", help="keep running and renew before expiry")
    boot.add_argument(
        "--interval",
        type=float,
        default=3600.0,
        help="seconds between checks with --watch (default: 3600)",
    )
    boot.set_defaults(run=cmd_bootstrap)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
