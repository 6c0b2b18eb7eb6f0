#!/usr/bin/env python3
"""Every client in a process of its own against one local nginx, interleaved rounds, medians.

    swift build -c release --static-swift-stdlib            # in Benchmarks/
    python3 scripts/bench.py --rounds 3 --n 20000 --out results.json

Each round runs every scenario, and in each scenario every client once (the clients' order
turns from round to round), so a machine whose load changes affects them alike. Prints the
results table (medians over the rounds; each ratio taken within each round, given as the median
of the rounds' ratios and their range) and the table of the ratios Runway is held to, and writes
every run and the medians to --out; scripts/chart.py draws the chart from that file.
"""

import argparse
import datetime
import json
import os
import platform
import sys

from benchlib import CLIENTS, SCENARIOS, ClientFailed, Nginx, format_ratio, measure, median, paired_ratio

# URLSession on Linux takes no custom CA: it sits out the TLS rows.
SITS_OUT = {("urlsession", True)}


def table(medians, runs, clients, scenarios):
    """The results as a Markdown table: one row per scenario and client. The ratios are taken
    within each round (see `paired_ratio`): their median over the rounds, and their range."""
    rows = ["| scenario | client | req/s | CPU µs/req | ÷ loop | ÷ AHC | p50 µs | p99 µs | peak RSS MB |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for scenario in scenarios:
        cells = medians.get(scenario["name"], {})
        for client in clients:
            m = cells.get(client)
            if not m:
                rows.append(f"| {scenario['name']} | {client} | – | – | – | – | – | – | – |")
                continue
            ratio = lambda base: "1.00" if client == base else format_ratio(paired_ratio(runs, scenario["name"], client, base))
            rows.append(f"| {scenario['name']} | {client} | {m['rps']:,.0f} | {m['cpu_us']:.0f} | {ratio('loop')} "
                        f"| {ratio('ahc')} | {m['p50_us']:,.0f} | {m['p99_us']:,.0f} | {m['rss_mb']:.0f} |")
    return "\n".join(rows)


# What Runway is measured against, as (label, client, base, key): req/s ratios, and at c = 1 the
# p50 latency over the loop's (a ratio of latencies: lower is better).
TARGETS = [
    ("bare ÷ loop", "runway-bare", "loop", "rps"),
    ("chain ÷ bare", "runway-chain", "runway-bare", "rps"),
    ("manager ÷ chain", "runway-manager", "runway-chain", "rps"),
    ("manager-inline ÷ chain", "runway-manager-inline", "runway-chain", "rps"),
    ("chain ÷ AHC", "runway-chain", "ahc", "rps"),
    ("bare ÷ AHC", "runway-bare", "ahc", "rps"),
    ("bare-loop ÷ loop", "runway-bare-loop", "loop", "rps"),
    ("chain-loop ÷ bare-loop", "runway-chain-loop", "runway-bare-loop", "rps"),
    ("chain-loop ÷ AHC", "runway-chain-loop", "ahc", "rps"),
    ("p50 bare ÷ loop", "runway-bare", "loop", "p50_us"),
    ("p50 chain ÷ loop", "runway-chain", "loop", "p50_us"),
    ("p50 bare-loop ÷ loop", "runway-bare-loop", "loop", "p50_us"),
    ("p50 chain-loop ÷ loop", "runway-chain-loop", "loop", "p50_us"),
]


def targets_table(runs, scenarios):
    """The ratios Runway is held to, one column per scenario: the median of the rounds' ratios
    and their range."""
    rows = ["| ratio | " + " | ".join(s["name"] for s in scenarios) + " |",
            "| --- |" + " ---: |" * len(scenarios)]
    for label, client, base, key in TARGETS:
        if key == "p50_us":
            cells = [format_ratio(paired_ratio(runs, s["name"], client, base, key)) if s["c"] == 1 else "" for s in scenarios]
        else:
            cells = [format_ratio(paired_ratio(runs, s["name"], client, base, key)) for s in scenarios]
        if any(cell not in ("", "–") for cell in cells):
            rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n", type=int, default=20000, help="requests per run")
    parser.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated, from: " + ", ".join(CLIENTS))
    parser.add_argument("--scenarios", default=None, help="comma-separated scenario names (default: all)")
    parser.add_argument("--out", default="results.json")
    args = parser.parse_args()
    clients = args.clients.split(",")
    scenarios = [s for s in SCENARIOS if not args.scenarios or s["name"] in args.scenarios.split(",")]

    server = Nginx()
    runs, failures = [], []
    try:
        for round_index in range(args.rounds):
            order = clients[round_index % len(clients):] + clients[:round_index % len(clients)]
            for scenario in scenarios:
                for client in order:
                    if (client, scenario["tls"]) in SITS_OUT:
                        continue
                    try:
                        result = measure(CLIENTS[client], scenario, server, args.n)
                    except ClientFailed as failure:
                        # Kept in the results and counted in the table; its output goes to a log.
                        failures.append({"client": client, "scenario": scenario["name"], "round": round_index + 1,
                                         "error": str(failure)})
                        with open(args.out + ".failures.log", "a") as log:
                            log.write(f"== round {round_index + 1}: {failure}\n{failure.output}\n")
                        print(f"round {round_index + 1} {scenario['name']:>16} {client:>15}: {failure}", file=sys.stderr, flush=True)
                        continue
                    result.update(client=client, round=round_index + 1)
                    runs.append(result)
                    print(f"round {round_index + 1} {scenario['name']:>16} {client:>15}: {result['rps']:>9,.0f} req/s "
                          f"{result['cpu_us']:>6.1f} µs CPU", file=sys.stderr, flush=True)
    finally:
        server.stop()

    medians = {}
    for scenario in scenarios:
        for client in clients:
            mine = [r for r in runs if r["scenario"] == scenario["name"] and r["client"] == client]
            if mine:
                medians.setdefault(scenario["name"], {})[client] = {
                    key: median([r[key] for r in mine]) for key in ("rps", "cpu_us", "p50_us", "p99_us", "rss_mb")}
    with open(args.out, "w") as f:
        json.dump({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
                   "machine": f"{os.cpu_count()} CPUs {platform.machine()}", "rounds": args.rounds, "n": args.n,
                   "clients": clients, "scenarios": [s["name"] for s in scenarios], "medians": medians, "runs": runs, "failures": failures},
                  f, indent=1)
    print(table(medians, runs, clients, scenarios))
    print()
    print(targets_table(runs, scenarios))
    for f in failures:
        print(f"failed: round {f['round']}, {f['scenario']}, {f['client']}: {f['error']}")


if __name__ == "__main__":
    main()
