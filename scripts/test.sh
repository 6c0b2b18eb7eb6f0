#!/usr/bin/env bash
# The README's test command: Runway's tests (every trait on), the sample app's tests (a separate
# package that depends on Runway by path), what a consumer of Runway resolves, and the
# documentation (DocC; a warning fails). It starts with the format check (scripts/format.sh).
# Arguments go to both `swift test` runs (e.g. --filter RetryTests); with arguments, the last
# two checks and the format check are left out. Tests run in parallel, swift test's default.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then scripts/format.sh --check; fi
flags=(--explicit-target-dependency-import-check error)
swift test --enable-all-traits "${flags[@]}" "$@"
swift test --package-path Samples/HouseHunter "${flags[@]}" "$@"
if [ $# -eq 0 ]; then
  scripts/check-consumer-dependencies.sh
  scripts/docs.sh
fi
