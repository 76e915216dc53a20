#!/usr/bin/env bash
# Install everything the tests need, then lint (ruff), type-check (mypy, strict on src/) and run
# the whole test suite; fails when any of them fails.
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

# chromium: the real browser the HTML report's tests open it in (Debian's package).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get install -y -q chromium >/dev/null
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

# Every check runs even when an earlier one failed, so one run reports every problem; the script
# fails when any of them did. pytest's exit 5 (no test collected) is a failure too: a marker or
# a path that selects nothing must not pass as green.
failed=()
check() {
  local name=$1 code=0 started=$SECONDS
  shift
  "$@" || code=$?
  if [ "$code" != 0 ]; then
    [ "$code" = 5 ] && [ "$1" = .venv/bin/python ] && name="$name (no test collected)"
    failed+=("$name")
  fi
  echo "== $name: $([ "$code" = 0 ] && echo ok || echo "FAILED ($code)") in $((SECONDS - started)) s" >&2
}

# The code stays as clean as it is: lint and format (src, tests, benchmarks, scripts, as
# pyproject.toml configures them) and strict types on src/.
check "ruff check" .venv/bin/ruff check src tests benchmarks scripts
check "ruff format" .venv/bin/ruff format --check src tests benchmarks scripts
check "mypy" .venv/bin/mypy

if [ "$#" -gt 0 ]; then
  check "pytest $*" .venv/bin/python -m pytest -n 2 --dist loadgroup "$@"
else
  # Everything in parallel, then alone the tests that starve the whole machine for a moment (a
  # fork bomb), so that they cannot slow or break their neighbours. Both must pass, and the
  # solo step must find its tests: they are the only check that a fork bomb is contained.
  # The slowest tests are listed: the whole run has to stay within CI's time budget. Tests of
  # one xdist group (the Ray cluster's) share one worker, so only one cluster ever starts.
  check "tests" .venv/bin/python -m pytest -n 2 --dist loadgroup -m "not solo" --durations=25
  check "solo tests" .venv/bin/python -m pytest -m solo
fi

if [ "${#failed[@]}" -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "All checks passed."
