#!/usr/bin/env bash
# Installs the system packages Runway needs (Debian/Ubuntu), only those that are missing.
set -euo pipefail
packages=(libcurl4-openssl-dev libssl-dev libsqlite3-dev zlib1g-dev pkg-config openssl tmux tinyproxy dante-server python3 python3-jsonschema python3-h2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
