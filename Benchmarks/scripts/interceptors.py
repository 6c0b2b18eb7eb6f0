#!/usr/bin/env python3
"""What each standard interceptor costs per request: a chain of that one interceptor against a
chain of none, over Runway's libcurl dispatcher and a local nginx (300 B JSON, plain HTTP/1.1).

    swift build -c release --static-swift-stdlib            # in Benchmarks/
    python3 scripts/interceptors.py --out interceptors.json

- Instructions per request: `valgrind --tool=callgrind` counts every instruction of the client
  process (all threads) at c=1, for N and for 2N requests; (I(2N) - I(N)) / N cancels start-up
  and warm-up. Stable on a noisy machine.
- CPU µs per request: getrusage of the client process over 20,000 requests at c=16, in --rounds
  interleaved rounds (every variant once per round). The added µs is the median over rounds of the
  variant minus the empty chain in the same round: a VM whose speed shifts between rounds (seen
  here: 21 and 31 µs for the same client) moves both alike.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from benchlib import BIN, SCENARIOS, Nginx, client_command, measure, median

INTERCEPTORS = ["logging", "validation", "cache", "retry", "compression", "signing", "dns-bypass", "metrics", "tracing"]


def instructions(variant, server, scenario, n, binary):
    """Instructions the whole client process executes for `n` requests (after its warm-up)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        command = client_command(["BenchRunway", f"one:{variant}"], dict(scenario, c=1), server, n)
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary] + command[1:]
        result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
        if result.returncode != 0:
            raise RuntimeError(f"callgrind {variant} failed: {result.stderr[-800:]}")
        with open(out) as f:
            for line in f:
                match = re.match(r"(?:summary|totals):\s+(\d+)", line)
                if match:
                    return int(match.group(1))
    raise RuntimeError(f"no instruction total for {variant}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interceptors", default=",".join(INTERCEPTORS))
    parser.add_argument("--calls", type=int, default=1000, help="N for callgrind (it also runs 2N)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the CPU-time runs")
    parser.add_argument("--n", type=int, default=20000, help="requests per CPU-time run")
    parser.add_argument("--out", default="interceptors.json")
    parser.add_argument("--instructions-from", help="take the instruction counts from an earlier --out file")
    args = parser.parse_args()
    variants = ["none"] + args.interceptors.split(",")
    plain = next(s for s in SCENARIOS if s["name"] == "c=16")

    # valgrind 3.19 cannot read the debug information of Swift's release binaries: a stripped copy.
    work = tempfile.mkdtemp(prefix="runway-interceptors-")
    binary = os.path.join(work, "BenchRunway")
    subprocess.run(["strip", "--strip-debug", "-o", binary, os.path.join(BIN, "BenchRunway")], check=True)
    server = Nginx()
    results = {v: {"cpu_us": []} for v in variants}
    try:
        earlier = {}
        if args.instructions_from:
            with open(args.instructions_from) as f:
                earlier = json.load(f)["results"]
        for v in variants:
            if v in earlier:
                results[v]["instructions"] = earlier[v]["instructions"]
                continue
            one = instructions(v, server, plain, args.calls, binary)
            two = instructions(v, server, plain, 2 * args.calls, binary)
            results[v]["instructions"] = (two - one) / args.calls
            print(f"{v:>12}: {results[v]['instructions']:,.0f} instructions per request", file=sys.stderr, flush=True)
        for r in range(args.rounds):
            for v in variants[r % len(variants):] + variants[:r % len(variants)]:
                results[v]["cpu_us"].append(measure(["BenchRunway", f"one:{v}"], plain, server, args.n)["cpu_us"])
            print(f"round {r + 1} done", file=sys.stderr, flush=True)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    base = results["none"]
    for v in variants:
        r = results[v]
        r["added_us_paired"] = median([x - y for x, y in zip(r["cpu_us"], base["cpu_us"])]) if r["cpu_us"] else None
    rows = ["| interceptor | instructions / request | added instructions | CPU µs / request (c=16) | added µs |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for v in variants:
        r = results[v]
        r["cpu_us_median"] = median(r["cpu_us"])
        added = "–" if v == "none" else f"{r['instructions'] - base['instructions']:+,.0f}"
        if r["cpu_us"]:
            added_us = "–" if v == "none" else f"{r['added_us_paired']:+.1f}"
            us = f"{r['cpu_us_median']:.1f}"
        else:
            added_us = us = "–"
        rows.append(f"| {v} | {r['instructions']:,.0f} | {added} | {us} | {added_us} |")
    with open(args.out, "w") as f:
        json.dump({"calls": args.calls, "rounds": args.rounds, "n": args.n, "results": results}, f, indent=1)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
