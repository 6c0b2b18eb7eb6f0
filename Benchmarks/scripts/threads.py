#!/usr/bin/env python3
"""Where a client's CPU goes, thread by thread: CPU µs per request of the dispatcher's loop
thread (`runway.curl`; the libcurl loop has only its main thread) and of every other thread
together (Swift's executor threads, the main thread), against one local nginx.

    swift build -c release --static-swift-stdlib            # in Benchmarks/
    python3 scripts/threads.py --clients loop,runway-bare,runway-chain --scenarios c=16 --rounds 5

Each thread's user + system time is read from /proc/<pid>/task/<tid>/stat every 50 ms while the
client runs (the last reading before the thread or the process ends counts), so the figures
include the warm-up requests and have the kernel's 10 ms tick as their grain; at 20,000
requests and more that is under 1 %. Medians over --rounds interleaved rounds.
"""

import argparse
import json
import os
import subprocess
import time

from benchlib import CLIENTS, SCENARIOS, Nginx, client_command, median, require_static


def run(client, scenario, server, n):
    """One client process: (its JSON line, {thread name: clock ticks of CPU time})."""
    require_static(client[0])
    process = subprocess.Popen(client_command(client, scenario, server, n), stdout=subprocess.PIPE, text=True)
    ticks = {}
    while process.poll() is None:
        try:
            tids = os.listdir(f"/proc/{process.pid}/task")
        except OSError:
            break
        for tid in tids:
            try:
                with open(f"/proc/{process.pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{process.pid}/task/{tid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                ticks[tid] = (name, int(fields[11]) + int(fields[12]))  # utime + stime
            except (OSError, IndexError, ValueError):
                pass
        time.sleep(0.05)
    lines = [line for line in process.stdout.read().splitlines() if line.startswith("{")]
    if process.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(client)} {scenario['name']} failed (exit status {process.returncode})")
    by_name = {}
    for name, value in ticks.values():
        by_name[name] = by_name.get(name, 0) + value
    return json.loads(lines[-1]), by_name


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="loop,runway-bare,runway-chain,runway-manager")
    parser.add_argument("--scenarios", default="c=16")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=40000, help="requests per run")
    args = parser.parse_args()
    clients = args.clients.split(",")
    scenarios = [s for s in SCENARIOS if s["name"] in args.scenarios.split(",")]
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    server = Nginx()
    rows = {}
    try:
        for round_index in range(args.rounds):
            turned = clients[round_index % len(clients):] + clients[:round_index % len(clients)]
            for scenario in scenarios:
                for client in turned:
                    result, ticks = run(CLIENTS[client], scenario, server, args.n)
                    requests = args.n
                    loop = ticks.get("runway.curl", 0) * tick_us / requests
                    total = sum(ticks.values()) * tick_us / requests
                    rows.setdefault((scenario["name"], client), []).append((result["rps"], loop, total - loop, total))
    finally:
        server.stop()
    print("| scenario | client | req/s | loop thread µs/req | other threads µs/req | all threads µs/req | loop thread share |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (scenario, client), runs in rows.items():
        rps, loop, others, total = (median([run[i] for run in runs]) for i in range(4))
        # The libcurl loop has no `runway.curl` thread: its one thread is the loop.
        shown, share = (f"{loop:.1f}", f"{100 * loop / total:.0f} %") if loop else ("–", "–")
        print(f"| {scenario} | {client} | {rps:,.0f} | {shown} | {others:.1f} | {total:.1f} | {share} |")


if __name__ == "__main__":
    main()
