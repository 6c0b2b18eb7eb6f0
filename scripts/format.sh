#!/usr/bin/env bash
# Formats the package's Swift files with the toolchain's `swift format` and `.swift-format`
# (4-space indent, 140 columns). `--check` changes nothing: it fails on any finding or any line
# over 140 characters, as scripts/test.sh runs it. The codegen's golden files and the code
# swift-openapi-generator made (`Generated/` beside each openapi.yaml) are left as generated.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.swift' | grep -v -e '^Tests/MediatorCodegenTests/Golden/' -e '/Generated/')
if [ "${1:-}" = "--check" ]; then
  swift format lint --strict --configuration .swift-format "${files[@]}"
  if grep -n -E '^.{141,}' "${files[@]}"; then
    echo "lines over 140 characters (above)" >&2
    exit 1
  fi
else
  swift format format -i --configuration .swift-format "${files[@]}"
fi
