#!/usr/bin/env bash
# Installs the Debian packages that the test suite needs, when they are missing.
# Runs apt-get only as root; otherwise it says what is missing and leaves it to the user.
set -euo pipefail
# Each package: the command that proves it is present, then the Debian package name.
needs=(
  bwrap:bubblewrap
  runsc:runsc
  /usr/bin/python3:python3
)
missing=()
for pair in "${needs[@]}"; do
  cmd=${pair%%:*}; pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || [ -x "$cmd" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "system-deps: missing ${missing[*]}; install them with apt-get (needs root)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
