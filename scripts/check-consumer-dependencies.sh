#!/usr/bin/env bash
# What an app that depends on Runway resolves, checked with `swift package show-dependencies`
# (no build): the Foundation-only products bring no other package, and each trait brings only
# the packages of its product. Run by .ci/run; prints each case and fails on any difference.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A path dependency is named after its folder: the link makes it "Runway" whatever the clone's name.
ln -s "$root" "$work/Runway"

foundation_only='"Runway", "RunwayCore", "RunwayCurl", "RunwayURLSession", "RunwayTesting", "RunwayDNSBypass", "RunwayCompression", "RunwayMediator", "RunwayHAR", "RunwayServerSentEvents"'
failed=0

# check NAME TRAITS PRODUCTS EXPECTED: EXPECTED is the sorted, space-separated package identities.
check() {
  local name=$1 traits=$2 products=$3 expected=$4 dir="$work/$1"
  mkdir -p "$dir/Sources/App"
  echo 'import Runway' > "$dir/Sources/App/App.swift"
  local list="" product
  IFS=',' read -ra items <<< "$products"
  for product in "${items[@]}"; do
    product="$(echo "$product" | tr -d ' "')"
    list+=".product(name: \"$product\", package: \"Runway\"), "
  done
  cat > "$dir/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription
let package = Package(
    name: "App",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "../Runway", traits: [$traits])],
    targets: [.target(name: "App", dependencies: [$list])]
)
MANIFEST
  local got
  got="$(cd "$dir" && swift package show-dependencies --format json 2>/dev/null | python3 -c '
import json, sys
def walk(node, seen):
    for child in node.get("dependencies", []):
        seen.add(child["identity"])
        walk(child, seen)
    return seen
print(" ".join(sorted(walk(json.load(sys.stdin), set()) - {"runway"})))')"
  if [ "$got" = "$expected" ]; then
    echo "ok   $name: ${got:-no other package}"
  else
    echo "FAIL $name: resolved '${got}', expected '${expected}'"
    failed=1
  fi
}

check foundation-only '' "$foundation_only" ''
check signing '"Signing"' '"RunwaySigning"' 'swift-asn1 swift-crypto'
check cache '"Cache"' '"RunwayCache"' 'swift-asn1 swift-crypto'
check action-log '"ActionLog"' '"RunwayActionLog"' 'swift-log'
check logging '"Logging"' '"RunwayLogging"' 'swift-log'
check metrics '"Metrics"' '"RunwayMetrics"' 'swift-metrics'
check tracing '"Tracing"' '"RunwayTracing"' 'swift-distributed-tracing'
check http-types '"HTTPTypes"' '"RunwayHTTPTypes"' 'swift-http-types'
check openapi '"OpenAPI"' '"RunwayOpenAPI"' 'swift-http-types swift-openapi-runtime'
exit $failed
