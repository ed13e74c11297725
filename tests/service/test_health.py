"""/healthz and /readyz of the scheduler process, and its /metrics app."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from scheduler.kube.kueue_metrics import RECORDER
from scheduler.service.observability import health_app, scheduler_metrics_app


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
        assert (await http.get("/metrics")).status == 404, "metrics are served apart"


async def test_metrics_hold_kuotas_and_kueues_series() -> None:
    RECORDER.cycle(admitted=True, seconds=0.01)
    async with TestClient(TestServer(scheduler_metrics_app(None), host="127.0.0.1")) as http:
        text = await (await http.get("/metrics")).text()
    assert "kuota_api_write_duration_seconds" in text
    assert "kueue_admission_attempts_total{" in text
    assert "kueue_build_info{" in text
