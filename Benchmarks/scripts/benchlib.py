"""What the benchmark scripts share: one local nginx, the client processes, medians.

Python 3 standard library only.
"""

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
# `swift build -c release --static-swift-stdlib` puts the clients here; RUNWAY_BENCH_BIN names
# another folder (a second build's --scratch-path).
BIN = os.environ.get("RUNWAY_BENCH_BIN") or os.path.join(PACKAGE, ".build", "release")

# The 300-byte JSON every small request gets.
JSON_HEAD = ('{"id":42,"title":"Two-bedroom flat near the river","price":5200,"currency":"CNY",'
             '"city":"sh","kind":"rent","area":68.5,"rooms":2,"tags":["metro","south"],"pad":"')
JSON_BODY = JSON_HEAD + "x" * (300 - len(JSON_HEAD) - 2) + '"}'


def big_json():
    """A JSON list of just under 64 KiB, served gzip-compressed."""
    items, i = [], 0
    while sum(len(s) + 1 for s in items) < 64 * 1024 - 400:
        items.append('{"id":%d,"title":"Listing %d","price":%d,"city":"sh"}' % (i, i, 1000 + i * 7))
        i += 1
    return "[" + ",".join(items) + "]"


GZIP_BODY = big_json()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(command, **kwargs):
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)


class Nginx:
    """nginx on 127.0.0.1: 1 worker, `access_log off`, plain HTTP/1.1 on one port and TLS with
    HTTP/2 (ALPN) on another, its certificate from a throwaway CA made by openssl for 127.0.0.1,
    localhost and api.bench.test. `/json`: 300 B; `/gzip`: 64 KiB of JSON, gzip on the wire."""

    def __init__(self):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(nginx):
            sys.exit("nginx is missing: apt-get install -y nginx")
        self.dir = tempfile.mkdtemp(prefix="runway-bench-")
        d = self.dir
        os.chmod(d, 0o755)  # nginx's worker may run as another user (root starts it as nobody)
        os.makedirs(os.path.join(d, "www"))
        os.makedirs(os.path.join(d, "tmp"))
        ssl = lambda *args: run(["openssl", *args], cwd=d)
        ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=Runway bench CA")
        ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
            "-subj", "/CN=api.bench.test")
        with open(os.path.join(d, "san.ext"), "w") as f:
            f.write("subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:api.bench.test\n")
        ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "2", "-extfile", "san.ext")
        self.ca = os.path.join(d, "ca.pem")
        with open(os.path.join(d, "www", "json"), "w") as f:
            f.write(JSON_BODY)
        with open(os.path.join(d, "www", "gzip"), "w") as f:
            f.write(GZIP_BODY)
        run(["gzip", "-k", "-9", os.path.join(d, "www", "gzip")])
        self.plain_port, self.tls_port = free_port(), free_port()
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(f"""
worker_processes 1;
daemon off;
error_log {d}/error.log warn;
pid {d}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp;
    proxy_temp_path {d}/tmp;
    fastcgi_temp_path {d}/tmp;
    uwsgi_temp_path {d}/tmp;
    scgi_temp_path {d}/tmp;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    default_type application/json;
    gzip_static on;
    server {{
        listen 127.0.0.1:{self.plain_port} backlog=4096;
        root {d}/www;
    }}
    server {{
        listen 127.0.0.1:{self.tls_port} ssl http2 backlog=4096;
        ssl_certificate {d}/server.pem;
        ssl_certificate_key {d}/server.key;
        http2_max_concurrent_streams 1000;
        root {d}/www;
    }}
}}
""")
        self.process = subprocess.Popen([nginx, "-p", d, "-c", os.path.join(d, "nginx.conf")])
        for port in (self.plain_port, self.tls_port):
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.02)
            else:
                self.stop()
                sys.exit(f"nginx did not start (see {d}/error.log)")

    def url(self, scenario):
        if scenario["tls"]:
            return f"https://127.0.0.1:{self.tls_port}{scenario['path']}"
        return f"http://127.0.0.1:{self.plain_port}{scenario['path']}"

    def stop(self):
        self.process.terminate()
        self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# The scenarios: name, path, TLS + HTTP/2, concurrency.
SCENARIOS = [
    {"name": "c=1", "path": "/json", "tls": False, "c": 1},
    {"name": "c=16", "path": "/json", "tls": False, "c": 16},
    {"name": "c=64", "path": "/json", "tls": False, "c": 64},
    {"name": "TLS h2 c=16", "path": "/json", "tls": True, "c": 16},
    {"name": "TLS h2 c=64", "path": "/json", "tls": True, "c": 64},
    {"name": "64 KiB gzip c=16", "path": "/gzip", "tls": False, "c": 16},
]

# Each client is its own executable (Runway's three share one, with a mode).
CLIENTS = {
    "loop": ["BenchLoop"],
    "ahc": ["BenchAHC"],
    "urlsession": ["BenchURLSession"],
    "runway-bare": ["BenchRunway", "bare"],
    "runway-chain": ["BenchRunway", "chain"],
    "runway-bare-loop": ["BenchRunway", "bare-loop"],
    "runway-chain-loop": ["BenchRunway", "chain-loop"],
    "runway-manager": ["BenchRunway", "manager"],
    "runway-manager-inline": ["BenchRunway", "manager-inline"],
}


def client_command(client, scenario, server, n, prefix=()):
    """The command line that runs `client` (a CLIENTS entry) through `scenario`."""
    program, *mode = client
    expect = len(GZIP_BODY) if scenario["path"] == "/gzip" else len(JSON_BODY)
    command = [*prefix, os.path.join(BIN, program), *mode, "--url", server.url(scenario), "--c", str(scenario["c"]),
               "--n", str(n), "--expect-bytes", str(expect), "--label", scenario["name"]]
    if scenario["tls"]:
        command += ["--ca", server.ca, "--h2"]
    if scenario["path"] == "/gzip":
        command += ["--gzip"]
    return command


_STATIC_CHECKED = set()


def require_static(program):
    """Ends the run unless `program` was linked with --static-swift-stdlib, as Linux servers ship
    Swift programs: a client loading the Swift runtime from shared libraries pays their relocated
    pages in RSS (about 6 MB), and the comparison would measure the build, not the client."""
    if program in _STATIC_CHECKED:
        return
    path = os.path.join(BIN, program)
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: swift build -c release --static-swift-stdlib (in Benchmarks/)")
    linked = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    if "libswiftCore.so" in linked:
        sys.exit(f"{program} loads the Swift runtime as a shared library: build with "
                 "swift build -c release --static-swift-stdlib (in Benchmarks/)")
    _STATIC_CHECKED.add(program)


def measure(client, scenario, server, n, timeout=600):
    """Runs one client process; its JSON line as a dict."""
    require_static(client[0])
    result = subprocess.run(client_command(client, scenario, server, n), capture_output=True, text=True, timeout=timeout)
    lines = [l for l in result.stdout.splitlines() if l.startswith("{")]
    if result.returncode != 0 or not lines:
        raise ClientFailed(f"{' '.join(client)} {scenario['name']} failed (exit status {result.returncode})", result.stderr)
    return json.loads(lines[-1])


class ClientFailed(Exception):
    """A client process that ended without its JSON line; `output` is its standard error."""

    def __init__(self, message, output):
        super().__init__(message)
        self.output = output


def median(values):
    return statistics.median(values) if values else None


def paired_ratio(runs, scenario, client, base, key="rps"):
    """`client`'s `key` over `base`'s, taken within each round (the two ran seconds apart, so a
    machine whose speed drifts between rounds moves both): (median, lowest, highest) over the
    rounds in which both ran, or None."""
    def by_round(name):
        return {r["round"]: r[key] for r in runs if r["scenario"] == scenario and r["client"] == name}
    mine, theirs = by_round(client), by_round(base)
    ratios = sorted(mine[k] / theirs[k] for k in mine if k in theirs and theirs[k])
    return (statistics.median(ratios), ratios[0], ratios[-1]) if ratios else None


def format_ratio(ratio):
    """`0.65 (0.58–0.74)`: the median of the rounds' ratios, and their range."""
    if ratio is None:
        return "–"
    middle, low, high = ratio
    return f"{middle:.2f} ({low:.2f}–{high:.2f})"
