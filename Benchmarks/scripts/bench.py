#!/usr/bin/env python3
"""Every client in a process of its own against one local nginx, interleaved rounds, medians.

    swift build -c release --static-swift-stdlib            # in Benchmarks/
    python3 scripts/bench.py --rounds 3 --n 20000 --out results.json

Each round runs every scenario, and in each scenario every client once (the clients' order
turns from round to round), so a machine whose load changes affects them alike. Prints one
table (medians over the rounds) and writes every run and the medians to --out; scripts/chart.py
draws the chart from that file.
"""

import argparse
import datetime
import json
import os
import platform
import sys

from benchlib import CLIENTS, SCENARIOS, ClientFailed, Nginx, measure, median

# URLSession on Linux takes no custom CA: it sits out the TLS rows.
SITS_OUT = {("urlsession", True)}


def table(medians, clients, scenarios):
    """The results as a Markdown table: one row per scenario and client."""
    rows = ["| scenario | client | req/s | CPU µs/req | ÷ loop | ÷ AHC | p50 µs | p99 µs | peak RSS MB |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for scenario in scenarios:
        cells = medians.get(scenario["name"], {})
        loop, ahc = cells.get("loop", {}).get("rps"), cells.get("ahc", {}).get("rps")
        for client in clients:
            m = cells.get(client)
            if not m:
                rows.append(f"| {scenario['name']} | {client} | – | – | – | – | – | – | – |")
                continue
            ratio = lambda base: f"{m['rps'] / base:.2f}" if base else "–"
            rows.append(f"| {scenario['name']} | {client} | {m['rps']:,.0f} | {m['cpu_us']:.0f} | {ratio(loop)} | {ratio(ahc)} "
                        f"| {m['p50_us']:,.0f} | {m['p99_us']:,.0f} | {m['rss_mb']:.0f} |")
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
    print(table(medians, clients, scenarios))
    for f in failures:
        print(f"failed: round {f['round']}, {f['scenario']}, {f['client']}: {f['error']}")


if __name__ == "__main__":
    main()
