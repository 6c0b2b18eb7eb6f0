#!/usr/bin/env bash
# The README's test command: Runway's tests (every trait on), the sample app's tests (a separate
# package that depends on Runway by path), and what a consumer of Runway resolves.
# Arguments go to both `swift test` runs (e.g. --filter RetryTests).
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(--no-parallel --explicit-target-dependency-import-check error)
swift test --enable-all-traits "${flags[@]}" "$@"
swift test --package-path Samples/HouseHunter "${flags[@]}" "$@"
scripts/check-consumer-dependencies.sh
