"""Discovery and OpenAPI of the visibility API, as the aggregator and kubectl read them."""

from __future__ import annotations

from scheduler.visibility import discovery


def test_every_version_lists_the_queues_and_their_pendingworkloads() -> None:
    resources = discovery.api_resource_list("v1beta2")
    assert resources["groupVersion"] == "visibility.kueue.x-k8s.io/v1beta2"
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["clusterqueues/pendingworkloads"]["verbs"] == ["get"]
    assert by_name["clusterqueues/pendingworkloads"]["namespaced"] is False
    assert by_name["localqueues/pendingworkloads"]["namespaced"] is True
    assert by_name["localqueues"]["verbs"] == []
    assert {r["kind"] for r in by_name.values()} == {"PendingWorkloadsSummary"}


def test_the_group_prefers_v1beta2() -> None:
    group = discovery.api_group()
    assert group["preferredVersion"]["version"] == "v1beta2"
    assert [v["version"] for v in group["versions"]] == ["v1beta2", "v1beta1"]
    assert discovery.api_group_list()["groups"][0]["name"] == "visibility.kueue.x-k8s.io"


def test_the_openapi_document_resolves_every_reference_and_names_both_versions() -> None:
    document = discovery.openapi_v2("t", "v0")
    assert discovery.unresolved_refs(document) == []
    assert discovery.unresolved_refs({"a": {"$ref": "#/definitions/x"}}) == ["#/definitions/x"]
    shared = {"parameters": {"a/b": {}}, "paths": {"p": {"$ref": "#/parameters/a~1c"}}}
    assert discovery.unresolved_refs(shared) == ["#/parameters/a~1c"]
    shared["paths"]["p"]["$ref"] = "#/parameters/a~1b"  # JSON pointer escaping: ~1 is /
    assert discovery.unresolved_refs(shared) == []
    paths = document["paths"]
    for version in ("v1beta1", "v1beta2"):
        cq = f"/apis/visibility.kueue.x-k8s.io/{version}/clusterqueues/{{name}}/pendingworkloads"
        lq = (
            f"/apis/visibility.kueue.x-k8s.io/{version}/namespaces/{{namespace}}/localqueues/"
            "{name}/pendingworkloads"
        )
        assert cq in paths and lq in paths
        assert {p["name"] for p in paths[cq]["get"]["parameters"]} == {"limit", "offset"}
    body, etag = discovery.encoded(document)
    assert discovery.encoded(document) == (body, etag)
