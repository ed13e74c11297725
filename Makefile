# kuota — the two commands a newcomer needs are `make demo` and `make test`.
# Everything else here is a step they depend on.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: help venv tools node-tools frameworks-tools image demo down demo-multikueue down-multikueue test test-unit test-e2e test-e2e-node test-frameworks test-kueue-e2e kueue-e2e-tools test-webhook-load chaos lint lint-imports bench bench-kueue bench-kueue-large clean

help:
	@echo "make demo    start the local Kubernetes cluster and run kuota on it"
	@echo "make test    set everything up and run every test (unit, integration, end-to-end)"
	@echo "make down    stop the cluster that 'make demo' started"
	@echo "make demo-multikueue  a manager and two worker clusters: a Job submitted once runs on a worker"
	@echo "make down-multikueue  stop the three clusters of 'make demo-multikueue'"
	@echo "make bench   run the benchmarks and print their figures"
	@echo "make bench-kueue  Kueue's scheduler benchmark, Kueue and kuota side by side"
	@echo "make chaos   the chaos suite's long form: scheduler, API server and etcd faults mid-burst"
	@echo "make image   build kuota's image (no Docker needed) into build/ as an OCI archive"
	@echo "make test-kueue-e2e  Kueue's own e2e suites against kuota's Kueue-compatible install"
	@echo "make test-frameworks  LeaderWorkerSet, Ray, MPI, Kubeflow, AppWrapper: their real controllers, queued by kuota"

# A virtual environment with kuota and its pinned dev dependencies; redone when
# pyproject.toml changes.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "kuota needs Python >= 3.11, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

venv: $(STAMP)

# The pinned control-plane binaries, the JobSet controller and kueuectl, built from Go
# modules into the user's cache (a no-op when the cache already holds them).
tools: venv
	$(PY) -m e2e.cluster build

# kuota's image as an OCI archive, built without a container engine (mmdebstrap,
# chroot, pip; e2e/image), cached under the tools cache by the hash of its
# inputs. Needs root; installs mmdebstrap with apt-get if it is missing.
IMAGE_ARCHIVE := build/kuota-image.oci.tar
image: venv
	$(PY) -m e2e.image build --out $(IMAGE_ARCHIVE)

# The real node's tools (kubelet, kube-proxy, pause; containerd, runc and the
# CNI plugins from Debian) and the image, for the real-node tests.
node-tools: tools
	$(PY) -m e2e.cluster build --real-node

# MultiKueue: three local control planes (a manager running kuota-multikueue and
# two workers), seed 003's objects, one Job submitted to the manager.
demo-multikueue: tools
	$(PY) -m e2e.demo_multikueue up

down-multikueue: venv
	$(PY) -m e2e.demo_multikueue down

# KUOTA_LEGACY_VERSIONS (e.g. `v1alpha1,v1alpha2,v1beta1`, or empty for none) sets which
# versions kuota's CRDs serve besides v1beta2 (the chart's crds.servedLegacyVersions);
# unset, the chart's default: v1beta1 (docs/api-differences.md#api-versions-served).
DEMO_VERSIONS = $(if $(filter undefined,$(origin KUOTA_LEGACY_VERSIONS)),,--served-legacy-versions '$(KUOTA_LEGACY_VERSIONS)')
demo: tools
	$(PY) -m e2e.cluster up --kuota $(DEMO_VERSIONS)
	@echo
	@echo "Nodes of the local cluster (kwok fakes: labels and taints as a small cloud would have):"
	@$(PY) -m e2e.cluster env > $(VENV)/cluster.env && . ./$(VENV)/cluster.env && \
	  kubectl get nodes -L instance-type -L cloud.provider.com/accelerator && echo && \
	  kubectl get nodes -o custom-columns='NAME:.metadata.name,TAINTS:.spec.taints[*].key,EFFECT:.spec.taints[*].effect,GPUS:.status.capacity.nvidia\.com/gpu'
	@echo
	$(PY) -m e2e.demo
	@echo
	@echo "The cluster keeps running with kuota on it."
	@echo "Reach it with:  eval \"\$$($(PY) -m e2e.cluster env)\"   then kubectl as usual, and kuota:"
	@echo "                $(VENV)/bin/kuota status"
	@echo "                $(VENV)/bin/kuota list workloads -n team-ml"
	@echo "                $(VENV)/bin/kuota explain JOB -n team-ml"
	@echo "Stop it with:   make down"

down: venv
	$(PY) -m e2e.cluster down

# Lint first (formatting, lint rules, mypy --strict, import contracts: cheap, and a
# finding there fails the run before the long suites start). Includes the real-node
# test (e2e/test_real_node.py), hence node-tools: it adds about 12 minutes to a cold
# run on 2 cores and 5 to a warm one (README); and the short form of test-kueue-e2e
# (e2e/test_kueue_compatible.py), hence kueue-e2e-tools. The framework controllers'
# tests (e2e/frameworks) are make test-frameworks.
test: lint tools node-tools kueue-e2e-tools
	$(PY) -m pytest -p no:cacheprovider --ignore=e2e/frameworks

# kueuectl and the singlecluster/baseline test binary of Kueue v0.19.2 (Go module proxy,
# go test -c) into the tools cache, for make test's short form of test-kueue-e2e; a
# no-op when cached. test-kueue-e2e builds the other suites' binaries when it needs them.
kueue-e2e-tools: venv
	$(PY) -m e2e.kueue_suites build --suites singlecluster/baseline

test-unit: venv
	$(PY) -m pytest -p no:cacheprovider tests

test-e2e: tools
	$(PY) -m pytest -p no:cacheprovider e2e --ignore=e2e/frameworks

# The job frameworks' own controllers (LeaderWorkerSet, KubeRay, the MPI operator,
# Kubeflow's trainers, AppWrapper), each built from its Go module into the tools cache
# (e2e/cluster/frameworks.py), and the end-to-end tests of kuota queueing their objects
# (e2e/frameworks). Not part of `make test`: the builds are heavy on 2 cores (docs/testing.md,
# "The frameworks' controllers", has the measured times).
frameworks-tools: tools
	$(PY) -m e2e.cluster build --frameworks

test-frameworks: frameworks-tools
	$(PY) -m pytest -p no:cacheprovider e2e/frameworks

# The chart, unchanged, with kuota's image on a real node of the local cluster
# (e2e/test_real_node.py), the sweep after a killed runner (e2e/test_real_node_crash.py),
# and the Kueue-compatible install with Kueue's own specs against it
# (e2e/test_kueue_compatible.py): each its own cluster in a private network namespace.
test-e2e-node: node-tools kueue-e2e-tools
	$(PY) -m pytest -p no:cacheprovider e2e/test_real_node.py e2e/test_real_node_crash.py \
	  e2e/test_kueue_compatible.py

# Kueue's own end-to-end suites (Kueue v0.19.2's test/e2e, built from its Go module with
# `go test -c` into the tools cache) against kuota's Kueue-compatible install on a real
# node, one fresh local cluster per suite (e2e/kueue_suites). SUITES picks the suites
# (comma-separated: singlecluster/baseline, sequential/baseline, tas/baseline,
# singlecluster/extended, multikueue/baseline), FOCUS is passed to ginkgo as
# --ginkgo.focus. Prints one table; every spec's outcome goes to
# e2e/kueue_suites/RESULTS.md (build/kueue-e2e/RESULTS.md with a FOCUS).
SUITES ?= singlecluster/baseline,sequential/baseline
FOCUS ?=
test-kueue-e2e: node-tools
	$(PY) -m e2e.kueue_suites run --suites '$(SUITES)' $(if $(FOCUS),--focus '$(FOCUS)') \
	  --command-line "make test-kueue-e2e SUITES='$(SUITES)'$(if $(FOCUS), FOCUS='$(FOCUS)')"

# The webhook's memory under 5,000 idle connections (tests/webhook/test_memory_under_load.py
# in its full form; make test opens 1,000). Measured: 17-33 s on 2 shared cores.
test-webhook-load: venv
	KUOTA_WEBHOOK_IDLE_CONNECTIONS=5000 $(PY) -m pytest -p no:cacheprovider -s tests/webhook/test_memory_under_load.py

# The chaos suite (e2e/chaos) in its long form: each scenario (scheduler SIGKILL, leader
# SIGSTOP past its lease, kube-apiserver restart, etcd frozen) with CHAOS_JOBS Jobs,
# CHAOS_REPEATS times; `make test` runs each once with 80. Each scenario prints its report.
CHAOS_JOBS ?= 300
CHAOS_REPEATS ?= 3
chaos: tools
	KUOTA_CHAOS_JOBS=$(CHAOS_JOBS) KUOTA_CHAOS_REPEATS=$(CHAOS_REPEATS) \
	  $(PY) -m pytest -p no:cacheprovider -s e2e/chaos

lint-imports: venv
	$(VENV)/bin/lint-imports

# The checks of .pre-commit-config.yaml over the whole tree, settings from pyproject.toml:
# formatting, lint rules, mypy --strict and the import-layer contracts.
lint: venv
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# Every benchmarks/bench_*.py module that exists, one after the other; a module
# that fails is named at the end (and fails the target) without hiding the others.
bench: venv
	@failed=""; for module in $$(ls benchmarks/bench_*.py | sed 's|/|.|; s|\.py$$||'); do \
	  echo "== $$module"; $(PY) -m $$module || failed="$$failed $$module"; done; \
	  if [ -n "$$failed" ]; then echo "failed:$$failed"; exit 1; fi

# Kueue's own scheduler benchmark (test/performance/scheduler of Kueue v0.19.2, built from
# the Go module proxy into the tools cache), Kueue's minimalkueue then kuota, each on a
# fresh local cluster, alternating BENCH_RUNS times; one table, BENCH_JSON as JSON
# (benchmarks/kueue_perf; figures in benchmarks/RESULTS.md). About 7 minutes per Kueue
# run of the baseline config on 2 cores; the large-scale config takes far longer.
# KUOTA_LEGACY_VERSIONS (e.g. `v1alpha1`, or empty for none) sets which versions kuota's
# CRDs serve besides v1beta2 (the chart's crds.servedLegacyVersions); unset, the chart's
# default, v1beta1. Each served legacy version costs one conversion call per write
# (RESULTS.md).
# BENCH_CPUS (e.g. 1.5) caps the whole cluster of each side (control plane and kuota or
# minimalkueue, not the runner) at that many CPUs with a cgroup quota (needs root; cgroup
# v2, or the v1 cpu hierarchy); unset or empty, no cap.
BENCH_RUNS ?= 1
BENCH_JSON ?= build/bench-kueue.json
BENCH_CPUS ?=
BENCH_VERSIONS = $(if $(filter undefined,$(origin KUOTA_LEGACY_VERSIONS)),,--kuota-legacy-versions '$(KUOTA_LEGACY_VERSIONS)') \
  $(if $(BENCH_CPUS),--cpus '$(BENCH_CPUS)')
bench-kueue: tools
	$(PY) -m benchmarks.kueue_perf --config baseline --runs $(BENCH_RUNS) --json $(BENCH_JSON) \
	  $(BENCH_VERSIONS)

bench-kueue-large: tools
	$(PY) -m benchmarks.kueue_perf --config large-scale --runs $(BENCH_RUNS) \
	  --json build/bench-kueue-large.json $(BENCH_VERSIONS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# For people with Docker (cannot run on machines without a Docker engine):
# build the image, create a kind cluster (e2e/kind/cluster.yaml: labelled
# nodes standing in for the flavors), load the image, install the chart and
# run the end-to-end suite against that cluster (KUBECONFIG: the suite then
# starts no local control plane; tests that need the host's 127.0.0.1 skip).
KIND_CLUSTER ?= kuota
KIND_KUBECONFIG := $(VENV)/kind.kubeconfig

.PHONY: test-e2e-kind
test-e2e-kind: venv
	docker build -t kuota:e2e .
	kind get clusters | grep -qx '$(KIND_CLUSTER)' || kind create cluster --name $(KIND_CLUSTER) --config e2e/kind/cluster.yaml
	kind get kubeconfig --name $(KIND_CLUSTER) > $(KIND_KUBECONFIG)
	kind load docker-image kuota:e2e --name $(KIND_CLUSTER)
	helm upgrade --install kuota charts/kuota --kubeconfig $(KIND_KUBECONFIG) -n kueue-system --create-namespace \
	  -f e2e/kind/values-kind.yaml --wait --timeout 5m
	KUBECONFIG=$(KIND_KUBECONFIG) $(PY) -m pytest -p no:cacheprovider e2e
