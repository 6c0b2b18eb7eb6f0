#!/usr/bin/env bash
# Regenerates the Swift code swift-openapi-generator makes from each OpenAPI document in the
# repository, and writes it next to the document, in Generated/:
#
#   Tests/RunwayOpenAPITests/OpenAPI/      the test document (every kind of operation)
#   Samples/HouseHunter/OpenAPI/              the sample app's client of its server
#   Benchmarks/Sources/BenchOpenAPI/       the benchmark's client of nginx's /json
#
# Each folder holds openapi.yaml and openapi-generator-config.yaml. The generator
# (apple/swift-openapi-generator 1.14.3) is built once, in .build-openapi-gen/ (ignored by git),
# and never by CI: the generated code is committed, so a build needs neither the generator nor
# its build plugin. Run this after changing a document; `--check` regenerates into a temporary
# folder and fails when the committed code differs.
#
# Times on the 2-core machine: building the generator ~4 min cold (then cached), generating all
# three documents ~2 s.
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.14.3
gen_dir=.build-openapi-gen
check=false
[ "${1:-}" = "--check" ] && check=true

if [ ! -d "$gen_dir/src" ]; then
  git clone --quiet --depth 1 --branch "$version" https://github.com/apple/swift-openapi-generator "$gen_dir/src"
fi
swift build --package-path "$gen_dir/src" --scratch-path "$gen_dir/build" --product swift-openapi-generator
generator="$gen_dir/build/debug/swift-openapi-generator"

documents=(
  Tests/RunwayOpenAPITests/OpenAPI
  Samples/HouseHunter/OpenAPI
  Benchmarks/Sources/BenchOpenAPI
)
status=0
for dir in "${documents[@]}"; do
  [ -f "$dir/openapi.yaml" ] || continue
  out="$dir/Generated"
  $check && out="$(mktemp -d)"
  mkdir -p "$out"
  if ! "$generator" generate --config "$dir/openapi-generator-config.yaml" --output-directory "$out" "$dir/openapi.yaml" \
    >"$gen_dir/last.log" 2>&1; then
    cat "$gen_dir/last.log" >&2
    exit 1
  fi
  if $check; then
    if ! diff -r "$out" "$dir/Generated" >/dev/null; then
      echo "$dir/Generated differs from what $dir/openapi.yaml generates: run scripts/generate-openapi.sh" >&2
      status=1
    fi
    rm -rf "$out"
  else
    echo "generated $out"
  fi
done
exit $status
