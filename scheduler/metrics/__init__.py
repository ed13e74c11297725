"""Kueue's Prometheus series, as kuota computes and serves them (docs/metrics.md).

Pure: the catalogue of every series (:mod:`.catalog`), the counters and
histograms recorded as the scheduler acts (:mod:`.store`), the gauges read
out of the engine's state at scrape time (:mod:`.gauges`) and the collector
that turns both into Prometheus families (:mod:`.exposition`).  Nothing here
talks to a cluster; the adapters record, the processes serve.
"""
