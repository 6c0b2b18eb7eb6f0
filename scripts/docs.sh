#!/usr/bin/env bash
# Builds the documentation of every library product (DocC, swift-docc-plugin): the guides in
# each Sources/<Module>/<Module>.docc catalog and the API reference. A warning (a broken symbol
# link, an undocumented parameter) fails the run. Archives go to .build/plugins/Swift-DocC/outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(RunwayCore Runway RunwayCurl RunwayURLSession RunwayTesting RunwayDNSBypass RunwayCompression RunwayMediator RunwayHAR RunwayServerSentEvents
  RunwaySigning RunwayCache RunwayActionLog RunwayLogging RunwayMetrics RunwayTracing RunwayHTTPTypes RunwayOpenAPI)
args=()
for target in "${targets[@]}"; do args+=(--target "$target"); done
swift package --enable-all-traits generate-documentation "${args[@]}" --warnings-as-errors
