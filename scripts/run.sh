#!/usr/bin/env bash
# The README's first command: install what is missing, then run HouseHunter's tour against its
# embedded sample server. Arguments go to the tour (e.g. --log-level info).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift run --package-path Samples/HouseHunter house-hunter tour "$@"
