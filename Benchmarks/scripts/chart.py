#!/usr/bin/env python3
"""Draws results.json (from scripts/bench.py) as an SVG: req/s and client CPU µs per request,
one group of bars per scenario, one bar per client. Standard library only.

    python3 scripts/chart.py results.json results.svg
"""

import json
import sys
from html import escape

COLORS = {"loop": "#555555", "ahc": "#e08a2c", "urlsession": "#b0b0b0", "runway-bare": "#2f6db5",
          "runway-chain": "#5a9be0", "runway-manager": "#9cc3ee", "runway-manager-inline": "#c7dcf3",
          "runway-bare-loop": "#1f7a4d", "runway-chain-loop": "#5cbf8a"}
NAMES = {"loop": "libcurl loop", "ahc": "AsyncHTTPClient", "urlsession": "URLSession", "runway-bare": "Runway bare",
         "runway-chain": "Runway full chain", "runway-manager": "Runway manager load()",
         "runway-manager-inline": "Runway manager load(), inline delivery",
         "runway-bare-loop": "Runway bare, workers on the loop", "runway-chain-loop": "Runway full chain, workers on the loop"}


def nice_max(value):
    """A round axis maximum above `value`."""
    step = 1
    while step * 10 < value:
        step *= 10
    for factor in (1, 2, 2.5, 5, 10):
        if step * factor >= value:
            return step * factor


def panel(out, x0, y0, width, height, title, key, data, scenarios, clients, fmt):
    top = max((data[s][c][key] for s in scenarios for c in clients if c in data.get(s, {})), default=1)
    axis = nice_max(top * 1.05)
    out.append(f'<text x="{x0}" y="{y0 - 12}" font-size="14" font-weight="bold">{escape(title)}</text>')
    for i in range(5):
        value = axis * i / 4
        y = y0 + height - height * i / 4
        out.append(f'<line x1="{x0}" x2="{x0 + width}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{fmt(value)}</text>')
    group = width / len(scenarios)
    bar = (group - 16) / len(clients)
    for g, scenario in enumerate(scenarios):
        gx = x0 + g * group + 8
        for b, client in enumerate(clients):
            m = data.get(scenario, {}).get(client)
            x = gx + b * bar
            if not m:
                out.append(f'<text x="{x + bar / 2:.1f}" y="{y0 + height - 3}" font-size="9" text-anchor="middle" fill="#999">–</text>')
                continue
            h = height * m[key] / axis
            out.append(f'<rect x="{x:.1f}" y="{y0 + height - h:.1f}" width="{bar - 1:.1f}" height="{h:.1f}" '
                       f'fill="{COLORS.get(client, "#888")}"><title>{escape(NAMES.get(client, client))}, {escape(scenario)}: '
                       f'{fmt(m[key])}</title></rect>')
        out.append(f'<text x="{x0 + g * group + group / 2:.1f}" y="{y0 + height + 16}" font-size="12" '
                   f'text-anchor="middle">{escape(scenario)}</text>')
    out.append(f'<line x1="{x0}" x2="{x0 + width}" y1="{y0 + height}" y2="{y0 + height}" stroke="#333"/>')


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        results = json.load(f)
    data, scenarios, clients = results["medians"], results["scenarios"], results["clients"]
    width, left, panel_height = 980, 70, 240
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{2 * panel_height + 210}" '
           f'font-family="sans-serif" fill="#222">', f'<rect width="100%" height="100%" fill="white"/>']
    thousands = lambda v: f"{v / 1000:.0f}k" if v >= 1000 else f"{v:.0f}"
    panel(out, left, 40, width - left - 20, panel_height, "Requests per second (higher is better)", "rps", data,
          scenarios, clients, thousands)
    panel(out, left, panel_height + 110, width - left - 20, panel_height,
          "Client CPU µs per request (lower is better)", "cpu_us", data, scenarios, clients, lambda v: f"{v:.0f}")
    # The legend, wrapped onto as many lines as the clients need.
    y = 2 * panel_height + 170
    x = left
    for client in clients:
        label = NAMES.get(client, client)
        step = 30 + 7 * len(label)
        if x > left and x + step > width - 20:
            x, y = left, y + 20
        out.append(f'<rect x="{x}" y="{y - 10}" width="12" height="12" fill="{COLORS.get(client, "#888")}"/>')
        out.append(f'<text x="{x + 16}" y="{y}" font-size="12">{escape(label)}</text>')
        x += step
    note = (f'medians of {results["rounds"]} interleaved rounds, {results["n"]:,} requests each, one process per client; '
            f'{results["machine"]}, {results["date"]}')
    out.append(f'<text x="{left}" y="{y + 24}" font-size="11" fill="#666">{escape(note)}</text>')
    out.append("</svg>")
    # The height the legend took.
    out[0] = out[0].replace(f'height="{2 * panel_height + 210}"', f'height="{y + 40}"')
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
