#!/usr/bin/env bash
# The README's first command: install what is missing, then run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift run runway-demo "$@"
