#!/usr/bin/env python3
"""What each standard interceptor costs per request: a chain of that one interceptor against a
chain of none, over Runway's libcurl dispatcher and a local nginx (300 B JSON, plain HTTP/1.1).

    swift build -c release --static-swift-stdlib            # in Benchmarks/
    python3 scripts/interceptors.py --out interceptors.json

- Instructions per request: `valgrind --tool=callgrind` counts every instruction of the client
  process (all threads) at c=1, for N and for 2N requests; (I(2N) - I(N)) / N cancels start-up
  and warm-up. Far steadier than time on a noisy machine, but a run still moves by a few thousand
  (thread scheduling changes the dispatcher loop's path).
- CPU µs per request, at c=16: one process per interceptor (`BenchRunway pair:<interceptor>`)
  runs the chain of that interceptor and the empty chain over one dispatcher in alternating blocks
  of --block requests, --pairs pairs of blocks (ABBA order), and takes getrusage of the process over
  each block. The added µs is the median over the pairs of the difference within a pair: a VM
  whose speed drifts (seen here: 21 and 31 µs for the same client in two runs) moves both sides
  of a pair alike. `none` is the empty chain against itself: the method's own noise. Each
  interceptor runs in --rounds such processes; the table gives the median and the range.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from benchlib import BIN, SCENARIOS, Nginx, client_command, median, require_static

INTERCEPTORS = ["logging", "validation", "cookies", "cache", "retry", "compression", "signing", "dns-bypass", "metrics", "tracing"]


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


def paired_run(variant, server, scenario, block, pairs):
    """One `pair:<variant>` process: its JSON line (cpu_us: the variant's, added_us: over none)."""
    require_static("BenchRunway")
    command = client_command(["BenchRunway", f"pair:{variant}"], scenario, server, block) + ["--pairs", str(pairs)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    lines = [l for l in result.stdout.splitlines() if l.startswith("{")]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"pair:{variant} failed (exit status {result.returncode}): {result.stderr[-800:]}")
    return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interceptors", default=",".join(INTERCEPTORS))
    parser.add_argument("--calls", type=int, default=1000, help="N for callgrind (it also runs 2N)")
    parser.add_argument("--rounds", type=int, default=3, help="paired processes per interceptor")
    parser.add_argument("--block", type=int, default=4000, help="requests per block of a paired run")
    parser.add_argument("--pairs", type=int, default=15, help="pairs of blocks per paired run")
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
    results = {v: {"cpu_us": [], "added_us": []} for v in variants}
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
                paired = paired_run(v, server, plain, args.block, args.pairs)
                results[v]["cpu_us"].append(paired["cpu_us"])
                results[v]["added_us"].append(paired["added_us"])
            print(f"round {r + 1} done", file=sys.stderr, flush=True)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    base = results["none"]
    rows = ["| interceptor | instructions / request | added instructions | CPU µs / request (c=16) | added µs (range) |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for v in variants:
        r = results[v]
        r["cpu_us_median"] = median(r["cpu_us"]) if r["cpu_us"] else None
        r["added_us_median"] = median(r["added_us"]) if r["added_us"] else None
        added = "–" if v == "none" else f"{r['instructions'] - base['instructions']:+,.0f}"
        if r["cpu_us"]:
            us = f"{r['cpu_us_median']:.1f}"
            added_us = f"{r['added_us_median']:+.1f} ({min(r['added_us']):+.1f} to {max(r['added_us']):+.1f})"
        else:
            added_us = us = "–"
        rows.append(f"| {v} | {r['instructions']:,.0f} | {added} | {us} | {added_us} |")
    with open(args.out, "w") as f:
        json.dump({"calls": args.calls, "rounds": args.rounds, "block": args.block, "pairs": args.pairs, "results": results},
                  f, indent=1)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
