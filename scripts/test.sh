#!/usr/bin/env bash
# Install everything the tests need, then run the whole test suite.
# Usage: bash scripts/test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# bubblewrap: the sandbox the security tests run under.
if ! command -v bwrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -q bubblewrap >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q bubblewrap >/dev/null; }
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get install -y -q bubblewrap >/dev/null
  fi
fi

# Ubuntu 24.04 lets AppArmor refuse unprivileged user namespaces, which bubblewrap needs when the
# tests do not run as root. Allow them on test machines where we may.
restrict=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [ -r "$restrict" ] && [ "$(cat "$restrict")" = 1 ]; then
  if [ "$(id -u)" = 0 ]; then
    sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0 || true
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0 || true
  fi
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'

# The real agent CLIs, pinned, into .cache/clis (skipped when already there).
if [ -x scripts/install_clis.sh ]; then
  scripts/install_clis.sh
fi

if [ "$#" -gt 0 ]; then
  exec .venv/bin/python -m pytest -n 2 "$@"
fi
# Everything in parallel, then alone the tests that starve the whole machine for a moment (a fork
# bomb), so that they cannot slow or break their neighbours. Both must pass.
status=0
.venv/bin/python -m pytest -n 2 -m "not solo" || status=$?
.venv/bin/python -m pytest -m solo || status=$?
exit "$status"
