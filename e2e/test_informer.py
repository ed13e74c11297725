"""The informer against a real API server: the initial list, every change
seen in order, and nothing lost while the server keeps ending the watch
(1-second watch timeouts force a resume from the last version many times)."""

from __future__ import annotations

import asyncio
import json

import pytest
from kubernetes_asyncio import client

from scheduler.kube.informer import Event, Informer
from scheduler.kube.source import KubeSource, Resource

from .waiting import eventually

pytestmark = pytest.mark.cluster
CONFIGMAPS = Resource(group="", version="v1", plural="configmaps")


async def test_informer_mirrors_configmaps_across_watch_resumes(
    api: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "before"}, "data": {"n": "0"}}
    )
    events: list[Event] = []
    informer = Informer(
        "configmaps",
        KubeSource(api, CONFIGMAPS, page_size=50, watch_timeout_seconds=1),
        events.append,
    )
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.synced.wait(), timeout=30)
        assert f"{namespace}/before" in informer.store, "the first list includes existing objects"

        for i in range(20):  # spread over several 1 s watch windows
            await core.create_namespaced_config_map(namespace, {"metadata": {"name": f"cm-{i}"}})
            await asyncio.sleep(0.15)
        await core.patch_namespaced_config_map("cm-3", namespace, {"data": {"changed": "yes"}})
        await core.delete_namespaced_config_map("before", namespace)

        ours = lambda: [e for e in events if e.key.startswith(f"{namespace}/")]  # noqa: E731

        async def done() -> list[Event]:
            return ours()

        await eventually(
            done,
            lambda seen: any(e.type == "DELETED" and e.key.endswith("/before") for e in seen),
            timeout=30,
            what="the deletion event",
        )
        created = [e.key for e in ours() if e.type == "ADDED" and "/cm-" in e.key]
        assert created == [f"{namespace}/cm-{i}" for i in range(20)], (
            "every create seen once, in order"
        )
        modified = [e for e in ours() if e.type == "MODIFIED"]
        assert [e.key for e in modified] == [f"{namespace}/cm-3"]
        assert modified[0].object["data"] == {"changed": "yes"}
        assert informer.resumes >= 2, "the watch really was resumed across server timeouts"
        mirrored = {key for key in informer.store if key.startswith(f"{namespace}/")}
        listed = await core.list_namespaced_config_map(namespace)
        assert mirrored == {f"{namespace}/{item.metadata.name}" for item in listed.items}

        # A server-side apply makes the API server record its field manager; the
        # informer's copy leaves that record out (kuota never reads it).
        response = await api.call_api(
            f"/api/v1/namespaces/{namespace}/configmaps/cm-3",
            "PATCH",
            query_params=[("fieldManager", "e2e-tool")],
            header_params={"Content-Type": "application/apply-patch+yaml"},
            body={"apiVersion": "v1", "kind": "ConfigMap", "data": {"applied": "yes"}},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=True,
        )
        on_server = json.loads(await response.read())
        assert any(
            entry.get("manager") == "e2e-tool" for entry in on_server["metadata"]["managedFields"]
        ), "the API server records the field manager"

        def is_applied(e: Event) -> bool:
            return bool(e.object.get("data", {}).get("applied") == "yes")

        applied = await eventually(
            done, lambda seen: any(map(is_applied, seen)), timeout=30, what="the applied change"
        )
        event = next(filter(is_applied, applied))
        assert "managedFields" not in event.object["metadata"]
        assert "managedFields" not in informer.store[f"{namespace}/cm-3"]["metadata"]
        assert (
            event.object["metadata"]["resourceVersion"] == on_server["metadata"]["resourceVersion"]
        ), "the rest of the metadata is kept"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
