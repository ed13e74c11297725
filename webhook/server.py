"""``kuota-webhook``: the admission and CRD-conversion webhook process.

The process shell around :func:`webhook.app.create_app`: TLS from certificate
files (reloaded in place when they change, see :mod:`certs.reload`), an
optional plain-HTTP probe port, JSON logs, and a graceful end: on SIGTERM
(or SIGINT) the listener closes, requests in flight get
``--shutdown-grace`` seconds to finish, then the process exits 0.

Memory stays bounded under any number of clients: the
HTTPS listener (:mod:`webhook.listener`) holds at most ``--max-connections``
connections (:mod:`webhook.connections` says which one it closes first),
a TLS handshake gets ``--tls-handshake-timeout`` seconds and an idle
connection ``--idle-timeout`` seconds (aiohttp's ``keepalive_timeout``,
also on the probe port), and the buffers of closed connections go back to
the system (:mod:`webhook.memory`).

Start-up order: the Configuration (``--config``) is checked first, with the
rules of ``kuota validate``: an invalid one ends the process with exit code
1 and one log line naming every field at fault, and the settings kuota does
not act on are logged as warnings.  Then the probe port (if any) answers at
once, ``/readyz`` saying 503 until the certificate is loaded; the HTTPS
listener opens once it is.  A missing certificate after ``--cert-wait``
seconds ends the process with exit code 1 and a message naming the files.

TLS: 1.2 at least; the Configuration's ``tls`` section (Kueue's
``TLSOptions``) raises ``minVersion`` to ``VersionTLS13`` or restricts the
TLS 1.2 cipher suites (:func:`tls_context`).
"""

from __future__ import annotations

import asyncio
import gc
import signal
import ssl
import sys
from pathlib import Path

from aiohttp import web

from certs.reload import CertificateReloader, server_context
from scheduler.api.config_file import ConfigurationError
from scheduler.api.tls_options import openssl_cipher_list
from webhook import secure_metrics
from webhook.app import METRICS, create_app, probe_app
from webhook.connections import ConnectionPool
from webhook.listener import BoundedTLSSite
from webhook.logs import configure, logger
from webhook.memory import return_large_buffers, use_small_tls_buffers
from webhook.settings import WebhookSettings, build_parser, settings_from_args


async def serve(settings: WebhookSettings, *, stop: asyncio.Event | None = None) -> int:
    """Run until ``stop`` is set (or SIGTERM/SIGINT arrives); returns the exit code."""
    assert settings.cert_file is not None and settings.key_file is not None
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(signum, stop.set)
        except (NotImplementedError, RuntimeError):  # not the main thread (tests)
            pass
    reloader = CertificateReloader(
        settings.cert_file, settings.key_file, context=tls_context(settings)
    )
    app = create_app(settings, is_ready=lambda: reloader.loaded)
    metrics = app[METRICS]
    pool = ConnectionPool(
        settings.max_connections, on_evict=lambda why: metrics.evictions.labels(why).inc()
    )
    metrics.connections.set_function(pool.open_count)
    app.middlewares.append(pool.middleware())
    runners: list[web.AppRunner] = []
    try:
        if settings.probe_port is not None:
            probes = web.AppRunner(
                probe_app(lambda: reloader.loaded),
                access_log=None,
                keepalive_timeout=settings.idle_timeout_seconds,
            )
            await probes.setup()
            runners.append(probes)
            await web.TCPSite(probes, settings.host, settings.probe_port).start()
        if not await reloader.wait_until_loaded(settings.cert_wait_seconds):
            logger().error(
                "no serving certificate",
                extra={
                    "context": {
                        "cert": str(settings.cert_file),
                        "key": str(settings.key_file),
                        "waited": settings.cert_wait_seconds,
                    }
                },
            )
            return 1
        runner = web.AppRunner(
            app,
            access_log=None,
            shutdown_timeout=settings.shutdown_grace_seconds,
            keepalive_timeout=settings.idle_timeout_seconds,
        )
        await runner.setup()
        runners.insert(0, runner)
        site = BoundedTLSSite(
            runner,
            settings.host,
            settings.port,
            ssl_context=reloader.context,
            pool=pool,
            handshake_timeout=settings.tls_handshake_timeout_seconds,
        )
        await site.start()
        port = site.port
        logger().info(
            "serving",
            extra={
                "context": {
                    "address": f"https://{settings.host}:{port}",
                    "manageJobsWithoutQueueName": settings.manage_jobs_without_queue_name,
                    "maxConnections": settings.max_connections,
                    "idleTimeoutSeconds": settings.idle_timeout_seconds,
                    "tlsHandshakeTimeoutSeconds": settings.tls_handshake_timeout_seconds,
                }
            },
        )
        gc.collect()
        # Start-up objects (schemas, tables) leave the collector's scans: shorter pauses.
        gc.freeze()
        watcher = asyncio.create_task(reloader.watch(settings.cert_reload_seconds))
        try:
            async with secure_metrics.serving(settings, metrics.render):
                await stop.wait()
        finally:
            watcher.cancel()
        logger().info(
            "shutting down", extra={"context": {"grace_seconds": settings.shutdown_grace_seconds}}
        )
        return 0
    finally:
        for runner in runners:
            await runner.cleanup()


def tls_context(settings: WebhookSettings) -> ssl.SSLContext:
    """The server's TLS context: TLS 1.2 at least, then the Configuration's ``tls`` options.

    As Go does with Kueue's: ``VersionTLS13`` allows TLS 1.3 only; a cipher
    list allows only its TLS 1.2 suites (TLS 1.3's are not configurable), so a
    list of TLS 1.3 suites alone leaves TLS 1.3 only.
    """
    context = server_context()
    if settings.tls_min_version == "VersionTLS13":
        context.minimum_version = ssl.TLSVersion.TLSv1_3
    if settings.cipher_suites:
        ciphers = openssl_cipher_list(settings.cipher_suites)
        if ciphers is None:
            context.minimum_version = ssl.TLSVersion.TLSv1_3
        else:
            context.set_ciphers(ciphers)
    return context


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure(args.log_level)
    try:
        settings = settings_from_args(args)
    except ConfigurationError as invalid:
        logger().error(invalid.render(), extra={"context": {"config": invalid.source}})
        return 1
    problem = secure_metrics.endpoint(settings)
    if isinstance(problem, str):
        parser.error(problem)
    if settings.cert_file is None or settings.key_file is None:
        parser.error(
            "a serving certificate is required: --cert-file and --key-file, or --cert-dir "
            "(make one with: python -m certs generate --ip 127.0.0.1 --out DIR)"
        )
    for warning in settings.config_warnings:
        logger().warning(
            f"{args.config}: {warning}", extra={"context": {"config": str(args.config)}}
        )
    return_large_buffers()
    use_small_tls_buffers()
    try:
        return asyncio.run(serve(settings))
    except KeyboardInterrupt:
        return 0


def cert_paths(directory: Path) -> tuple[Path, Path]:
    """The file names a certificate directory holds (as a Kubernetes TLS Secret names them)."""
    return directory / "tls.crt", directory / "tls.key"


if __name__ == "__main__":
    sys.exit(main())
