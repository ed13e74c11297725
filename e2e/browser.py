"""A real headless Chromium for the dashboard's end-to-end test, driven over DevTools.

Debian's ``chromium`` (installed by ``python -m e2e.cluster build``, see
:data:`PACKAGES`) is started headless with its DevTools protocol on a
loopback port; :class:`Page` sends it commands over that websocket (aiohttp)
and evaluates script in the page.  The browser reaches nothing but
127.0.0.1: every other address goes to a proxy that does not exist, names
do not resolve, and the background services that phone home are off.  Its
profile lives in a temporary directory, removed when it stops.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

PACKAGES = {"chromium": "chromium"}
"""Binary -> Debian package of the browser (installed with the cluster's tools)."""
FLAGS = (
    "--headless=new",
    "--no-sandbox",  # runs as root in CI
    "--disable-gpu",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
    "--ignore-certificate-errors",  # the dashboard's pair is the harness' own
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--metrics-recording-only",
    "--proxy-server=http://127.0.0.1:9",  # loopback goes direct; anything else nowhere
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
)


class BrowserMissing(RuntimeError):
    """Chromium is not installed: run ``python -m e2e.cluster build`` (``make tools``)."""


class Browser:
    """One Chromium process and its DevTools connection."""

    def __init__(self, process: subprocess.Popen[bytes], profile: Path, url: str) -> None:
        self.process = process
        self.profile = profile
        self.url = url
        self._session: aiohttp.ClientSession | None = None
        self._socket: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, timeout: float = 60) -> Browser:
        binary = shutil.which("chromium")
        if binary is None:
            raise BrowserMissing("chromium is not installed: run python -m e2e.cluster build")
        profile = Path(tempfile.mkdtemp(prefix="kuota-chromium-"))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(profile),
            "TMPDIR": str(profile),
        }
        with (profile / "chromium.log").open("wb") as log_file:  # the child keeps its copy
            process = subprocess.Popen(
                [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                stdout=subprocess.DEVNULL,
                stderr=log_file,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.is_file() or len(port_file.read_text().splitlines()) < 2:
            if process.poll() is not None or time.monotonic() > deadline:
                log = (profile / "chromium.log").read_text(errors="replace")[-2000:]
                cls._kill(process)
                raise RuntimeError(f"chromium did not open its DevTools port:\n{log}")
            await asyncio.sleep(0.1)
        port, path = port_file.read_text().splitlines()[:2]
        browser = cls(process, profile, f"ws://127.0.0.1:{port}{path}")
        await browser._connect()
        return browser

    async def _connect(self) -> None:
        self._session = aiohttp.ClientSession()
        self._socket = await self._session.ws_connect(self.url, max_msg_size=0)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self._socket is not None
        async for message in self._socket:
            if message.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            waiter = self._waiting.pop(data.get("id", -1), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(data)

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        """One DevTools command; its ``result`` (an ``error`` answer raises)."""
        assert self._socket is not None
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[number] = waiter
        await self._socket.send_str(json.dumps(message))
        answer = await asyncio.wait_for(waiter, timeout=60)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    async def page(self) -> Page:
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        page = Page(self, attached["sessionId"])
        await page.call("Runtime.enable")
        return page

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._socket is not None:
            await self._socket.close()
        if self._session is not None:
            await self._session.close()
        self._kill(self.process)
        shutil.rmtree(self.profile, ignore_errors=True)

    @staticmethod
    def _kill(process: subprocess.Popen[bytes]) -> None:
        for number in (signal.SIGTERM, signal.SIGKILL):
            if process.poll() is not None:
                return
            try:
                os.killpg(process.pid, number)  # its own session: our children only
            except ProcessLookupError:
                return
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                continue


class Page:
    """One tab."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    async def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.browser.send(method, params, session=self.session)

    async def goto(self, url: str) -> None:
        await self.call("Page.navigate", {"url": url})

    async def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` in the page (promises awaited)."""
        answer = await self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"script failed: {answer['exceptionDetails']}")
        return answer["result"].get("value")


__all__ = ["PACKAGES", "Browser", "BrowserMissing", "Page"]
