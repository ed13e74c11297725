"""How long does the CRD conversion endpoint take to answer?

The API server calls ``/convert`` for every read or write of a version other than
``v1beta2`` (a ``v1beta1`` watch turns each Workload write into one call), so the
endpoint's answer time is on the path of those writes.  This times the
endpoint's decision, :func:`webhook.convert.convert_review` plus the JSON
decoding and encoding the server does around it, in this process (the TLS and
HTTP around it are the same as every endpoint's: bench_webhook.py), on
ConversionReviews as the API server sends them:

1. one Workload (a Kueue-benchmark Workload with its admission status), ``v1beta2``
   to ``v1beta1`` and back: the answer time of one write;
2. a list of 500 such Workloads, ``v1beta2`` to ``v1beta1``: a list or watch
   resync;
3. one Workload already in the desired version (the API server sends such
   objects within a list of mixed versions).

Each case runs a fixed number of times (bounded in count and in time); the
median and p99 per review are printed, and per object for the list.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

from webhook.convert import convert_review

REPEATS = 2000
LIST_REPEATS = 20
LIST_SIZE = 500
LIMIT_SECONDS = 30.0


def workload(i: int, version: str = "v1beta2") -> dict[str, Any]:
    pod_set = {
        "name": "main",
        "count": 1,
        "template": {
            "spec": {
                "containers": [
                    {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}
                ],
                "restartPolicy": "Never",
            },
            "metadata": {},
        },
    }
    spec: dict[str, Any] = {
        "queueName": "lq-1",
        "priority": 100,
        "active": True,
        "podSets": [pod_set],
    }
    if version == "v1beta2":
        spec["priorityClassRef"] = {
            "group": "kueue.x-k8s.io",
            "kind": "WorkloadPriorityClass",
            "name": "high",
        }
    else:
        spec["priorityClassName"] = "high"
        spec["priorityClassSource"] = "kueue.x-k8s.io/workloadpriorityclass"
    return {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "Workload",
        "metadata": {
            "name": f"wl-{i}",
            "namespace": "team-a",
            "uid": f"00000000-0000-0000-0000-{i:012d}",
            "resourceVersion": str(1000 + i),
            "generation": 1,
            "creationTimestamp": "2026-11-27T12:00:00Z",
            "labels": {"kueue.x-k8s.io/queue-name": "lq-1", "class": "small"},
        },
        "spec": spec,
        "status": {
            "admission": {
                "clusterQueue": "cq-1",
                "podSetAssignments": [
                    {
                        "name": "main",
                        "flavors": {"cpu": "default"},
                        "resourceUsage": {"cpu": "1"},
                        "count": 1,
                    }
                ],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "Quota reserved in ClusterQueue cq-1",
                    "lastTransitionTime": "2026-11-27T12:00:01Z",
                    "observedGeneration": 1,
                },
                {
                    "type": "Admitted",
                    "status": "True",
                    "reason": "Admitted",
                    "message": "The workload is admitted",
                    "lastTransitionTime": "2026-11-27T12:00:01Z",
                    "observedGeneration": 1,
                },
            ],
        },
    }


def review(objects: list[dict[str, Any]], desired: str) -> bytes:
    return json.dumps(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {
                "uid": "b0c1d2e3",
                "desiredAPIVersion": f"kueue.x-k8s.io/{desired}",
                "objects": objects,
            },
        }
    ).encode()


def answer(body: bytes) -> bytes:
    """What the endpoint does per request: decode, convert, encode."""
    document, outcome = convert_review(json.loads(body))
    assert outcome == "converted", document
    return json.dumps(document).encode()


def timed(body: bytes, repeats: int) -> list[float]:
    """Seconds per call, ``repeats`` calls at most, stopping after LIMIT_SECONDS."""
    times = []
    deadline = time.monotonic() + LIMIT_SECONDS
    for _ in range(repeats):
        started = time.perf_counter()
        answer(body)
        times.append(time.perf_counter() - started)
        if time.monotonic() > deadline:
            break
    return times


def report(name: str, times: list[float], per: int = 1) -> None:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    median = statistics.median(ordered)
    line = f"{name:<44} {len(times):>5} reviews  median {median * 1e3:8.3f} ms"
    line += f"  p99 {p99 * 1e3:8.3f} ms"
    if per > 1:
        line += f"  ({median / per * 1e6:6.1f} us per object)"
    print(line, flush=True)


def main() -> int:
    down = review([workload(0)], "v1beta1")
    up = review([workload(0, "v1beta1")], "v1beta2")
    converted = json.loads(answer(down))["response"]["convertedObjects"][0]
    assert converted["apiVersion"] == "kueue.x-k8s.io/v1beta1", converted
    report("one Workload, v1beta2 -> v1beta1", timed(down, REPEATS))
    report("one Workload, v1beta1 -> v1beta2", timed(up, REPEATS))
    report(
        f"{LIST_SIZE} Workloads, v1beta2 -> v1beta1",
        timed(review([workload(i) for i in range(LIST_SIZE)], "v1beta1"), LIST_REPEATS),
        per=LIST_SIZE,
    )
    report(
        "one Workload already v1beta1 -> v1beta1",
        timed(review([workload(0, "v1beta1")], "v1beta1"), REPEATS),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
