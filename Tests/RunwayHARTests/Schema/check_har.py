#!/usr/bin/env python3
"""Checks a HAR file: valid against the HAR 1.2 JSON schema next to this script, and each
entry's time equal to the sum of its timings that are not -1 (ssl aside: connect includes it),
with ssl no longer than connect.

    python3 check_har.py FILE.har

Prints "ok: N entries ..." and exits 0 when the file passes; prints every problem and exits 1
when it does not; exits 3 when the jsonschema module is missing (a missing checker must fail,
never pass).
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("error: the Python module jsonschema is missing: apt-get install python3-jsonschema "
          "(scripts/install-deps.sh installs it)", file=sys.stderr)
    sys.exit(3)

PHASES = ["blocked", "dns", "connect", "send", "wait", "receive"]
TOLERANCE_MS = 0.001


def timing_problems(har):
    problems = []
    for index, entry in enumerate(har["log"]["entries"]):
        timings = entry["timings"]
        total = sum(timings[name] for name in PHASES if timings.get(name, -1) != -1)
        if abs(total - entry["time"]) > TOLERANCE_MS:
            problems.append(f"entry {index}: time {entry['time']} is not the sum of its timings, {total}")
        ssl, connect = timings.get("ssl", -1), timings.get("connect", -1)
        if ssl != -1 and (connect == -1 or ssl > connect + TOLERANCE_MS):
            problems.append(f"entry {index}: ssl {ssl} is not within connect {connect}")
    return problems


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "har-1.2.schema.json")
    with open(schema_path, encoding="utf-8") as file:
        schema = json.load(file)
    with open(sys.argv[1], encoding="utf-8") as file:
        har = json.load(file)
    validator = jsonschema.Draft7Validator(schema)
    problems = [f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
                for error in validator.iter_errors(har)]
    if not problems:
        problems = timing_problems(har)
    if problems:
        for problem in problems:
            print("invalid: " + problem)
        return 1
    entries = har["log"]["entries"]
    print(f"ok: {len(entries)} entries, valid HAR 1.2, every time the sum of its timings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
