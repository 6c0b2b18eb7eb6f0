#!/usr/bin/env python3
"""Ratios between clients measured in one benchmark run.

Usage: swift package benchmark --target DispatcherBenchmarks --format jmh --path /tmp/bench
       python3 scripts/ratios.py /tmp/bench/*.jmh.json

Benchmarks are named "<client> <path> c=<n>[ tls-h1|tls-h2]"; for every (path, c, transport)
this prints Runway's median throughput over each other client's, and its peak RSS over raw
libcurl's.
"""
import json
import re
import sys
from collections import defaultdict

groups = defaultdict(dict)
for path in sys.argv[1:]:
    for element in json.load(open(path)):
        name = element["benchmark"].split(".")[-1].replace("_", " ")
        m = re.match(r"(\S+) (\S+) (c=\d+)(?: (\S+))?$", name)
        if not m:
            continue
        client, route, concurrency, transport = m.groups()
        key = (route, concurrency, transport or "plain")
        throughput = element["primaryMetric"]["scorePercentiles"]["50.0"]
        rss = element.get("secondaryMetrics", {}).get("Memory (resident peak)", {}).get("scorePercentiles", {}).get("50.0")
        groups[key][client] = (throughput, rss)

print(f"{'benchmark':28} {'runway req/s':>12} {'÷ raw':>7} {'÷ AHC':>7} {'÷ URLSession':>12} {'RSS ÷ raw':>9}")
for key in sorted(groups):
    g = groups[key]
    if "runway" not in g:
        continue
    runway, runway_rss = g["runway"]
    def ratio(other, index=0, base=runway):
        value = g.get(other, (None, None))[index]
        return f"{base / value:.2f}" if value and base else "-"
    rss = ratio("raw-libcurl", 1, runway_rss) if runway_rss else "-"
    print(f"{' '.join(key):28} {runway:12.0f} {ratio('raw-libcurl'):>7} {ratio('async-http-client'):>7} {ratio('urlsession'):>12} {rss:>9}")
