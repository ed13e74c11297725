"""/healthz, /readyz and /metrics of the scheduler process."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from scheduler.service.observability import health_app


async def test_probes_follow_the_loop_and_the_informers() -> None:
    state = {"ready": False, "alive": True}
    app = health_app(ready=lambda: state["ready"], alive=lambda: state["alive"])
    async with TestClient(TestServer(app, host="127.0.0.1")) as http:
        assert (await http.get("/healthz")).status == 200
        not_ready = await http.get("/readyz")
        assert not_ready.status == 503 and await not_ready.text() == "informers not synced"
        state["ready"] = True
        assert (await http.get("/readyz")).status == 200
        state["alive"] = False
        assert (await http.get("/healthz")).status == 500
        metrics = await (await http.get("/metrics")).text()
        assert "kuota_api_write_duration_seconds" in metrics
        assert "kueue_admitted_workloads_total" in metrics
