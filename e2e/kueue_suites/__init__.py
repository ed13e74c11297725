"""Kueue's own end-to-end suites (v0.19.2), run against kuota's Kueue-compatible install.

The yardstick for "drop-in": ``make test-kueue-e2e`` builds the suites' Ginkgo
binaries from Kueue's Go module (:mod:`.tools`), brings up a local cluster
shaped as they expect with kuota installed by its chart (:mod:`.environment`,
:mod:`.kwok_stages`), runs them with JUnit reports (:mod:`.junit`) and writes
every spec's outcome to ``results/<suite>.md`` (:mod:`.report`).
"""
