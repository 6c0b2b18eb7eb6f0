#!/usr/bin/env bash
# Peak RSS of clients of Runway as an app builds them (release), and whether they load
# libFoundation.so (and so ICU). One consumer package, four executables, each run in a process
# of its own against a local HTTP server:
#
#   empty-essentials  an empty program that imports FoundationEssentials (the floor)
#   empty-foundation  an empty program that imports Foundation
#   bare              Runway + RunwayCurl: a Pipeline with no interceptor and a CurlDispatcher
#   full              every product that needs no Foundation, signing, the disk cache and the
#                     action log included, through the standard chain (Tests/FoundationFreeClient)
#
# Usage: scripts/measure-rss.sh [--runway PATH] [--requests N] [--static]
#   --runway PATH  the Runway checkout to measure (default: this one), e.g. an older commit
#                  unpacked with `git archive <commit> | tar -x -C PATH`
#   --static       link with --static-swift-stdlib and report the binaries' sizes too
# Not part of CI (a release build of every dependency takes minutes); ARCHITECTURE.md quotes it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runway="$root"
requests=2000
static=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runway) runway="$(cd "$2" && pwd)"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --static) static=(--static-swift-stdlib); shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
work="${RSS_WORK:-$root/.build-rss}"
mkdir -p "$work"
pkg="$work/clients"
rm -rf "$pkg/Sources" && mkdir -p "$pkg/Sources"
ln -sfn "$runway" "$work/Runway"

client() { mkdir -p "$pkg/Sources/$1" && cat > "$pkg/Sources/$1/main.swift"; }

client EmptyEssentials <<'EOF'
import FoundationEssentials
print(Date().timeIntervalSince1970 > 0 ? "" : "?", terminator: "")
EOF
client EmptyFoundation <<'EOF'
import Foundation
print(Date().timeIntervalSince1970 > 0 ? "" : "?", terminator: "")
EOF
client Bare <<'EOF'
import Dispatch
import Runway
import RunwayCurl
#if canImport(Glibc)
import Glibc
#endif
// Bare <mode> <url> <requests>, as the full client takes them.
let arguments = CommandLine.arguments
Task {
    do {
        let pipeline = Pipeline(interceptors: [], dispatcher: CurlDispatcher())
        let request = try Request(arguments[2])
        for _ in 0..<Int(arguments[3])! {
            guard try await pipeline.send(request).status == 200 else { exit(1) }
        }
        exit(0)
    } catch {
        print("\(error)")
        exit(1)
    }
}
dispatchMain()
EOF
client Full < "$root/Tests/FoundationFreeClient/main.swift"

products() { for p in "$@"; do printf '.product(name: "%s", package: "Runway"), ' "$p"; done; }
full="$(products Runway RunwayCurl RunwayCompression RunwayDNSBypass RunwayHAR RunwayServerSentEvents RunwayMediator RunwayLogging RunwayMetrics RunwayTracing RunwayHTTPTypes RunwaySigning RunwayCache RunwayActionLog)"
extra='.product(name: "Logging", package: "swift-log"), .product(name: "HTTPTypes", package: "swift-http-types"),'
cat > "$pkg/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription
let package = Package(
    name: "Clients",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../Runway", traits: ["Signing", "Cache", "ActionLog", "Logging", "Metrics", "Tracing", "HTTPTypes"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .executableTarget(name: "EmptyEssentials"),
        .executableTarget(name: "EmptyFoundation"),
        .executableTarget(name: "Bare", dependencies: [$(products Runway RunwayCurl)]),
        .executableTarget(name: "Full", dependencies: [$full $extra]),
    ]
)
MANIFEST

echo "building the clients (release${static:+, static stdlib}) against $runway ..." >&2
(cd "$pkg" && swift build -c release "${static[@]}" >&2)
bin="$(cd "$pkg" && swift build -c release "${static[@]}" --show-bin-path)"
echo "swift-crypto: $(cd "$pkg" && swift package show-dependencies --format json | python3 -c '
import json, sys
def walk(n):
    for c in n.get("dependencies", []):
        if c["identity"] == "swift-crypto": print(c["version"]); sys.exit()
        walk(c)
walk(json.load(sys.stdin))')" >&2

# A keep-alive HTTP/1.1 server answering /json, on a free port.
port_file="$(mktemp)"
python3 - "$port_file" <<'EOF' &
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    body = b'[' + b','.join([b'{"id":%d,"title":"flat %d"}' % (i, i) for i in range(8)]) + b']'
    # Head and body in one write: two small writes would wait out the client's delayed ACK.
    response = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    def do_GET(self):
        self.wfile.write(self.response)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
open(sys.argv[1], "w").write(str(server.server_address[1]))
server.serve_forever()
EOF
server=$!
trap 'kill $server 2>/dev/null; rm -f "$port_file"' EXIT
for _ in $(seq 50); do [ -s "$port_file" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$port_file")/json"

printf '%-17s %12s %10s %s\n' client "peak RSS MB" "size MB" "Foundation (libFoundation.so loaded; ICU linked in when static)"
row() {
  local name=$1 exe=$2 kb
  shift 2
  # GNU time's %M: the child's ru_maxrss, in kB (time itself, forked before the exec, is smaller).
  kb="$( { /usr/bin/time -f '%M' "$bin/$exe" "$@" >/dev/null; } 2>&1 | tail -1)"
  local loads=no
  if [ ${#static[@]} -gt 0 ]; then
    # Statically linked: Foundation's ICU data (icudtNN_dat) is in the binary or not.
    # (grep without -q reads all of nm's output: under pipefail an early exit would fail nm.)
    if nm "$bin/$exe" 2>/dev/null | grep ' icudt[0-9]*_dat$' >/dev/null; then loads="ICU linked in"; fi
  else
    if ldd "$bin/$exe" | grep 'libFoundation\.so' >/dev/null; then loads=yes; fi
  fi
  printf '%-17s %12.1f %10.2f %s\n' "$name" "$(echo "$kb / 1024" | bc -l)" "$(echo "$(stat -c %s "$bin/$exe") / 1048576" | bc -l)" "$loads"
}
row empty-essentials EmptyEssentials
row empty-foundation EmptyFoundation
row bare Bare bare "$url" "$requests"
row full Full chain "$url" "$requests"
