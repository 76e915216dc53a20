#!/usr/bin/env bash
# Install everything the tests need, then lint (ruff), type-check (mypy, strict on src/) and run
# the whole test suite; fails when any of them fails.
# Usage: bash scripts/test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off

# What the tests need, in one place each.
# System packages, as "command:package": a package is installed only when its command is missing.
system_packages=(
  bwrap:bubblewrap # the sandbox the security tests run under
  chromium:chromium # the browser the HTML report's tests open it in
  cc:gcc # builds the clock-stepping library of the differential clock test
  mmdebstrap:mmdebstrap # builds the Debian base images of the OCI environment tests
  skopeo:skopeo # copies OCI images into the image cache
  umoci:umoci # unpacks OCI images into root file systems
  buildah:buildah # builds the Dockerfile of an image environment test
)
# The extras of this package the tests need, for `pip install -e '.[...]'`.
python_extras=test

# Installs run side by side (they mostly wait on the network and the disk); each is waited for
# before the first step that needs it, and any failure fails the script.
background=()
background_names=()
in_background() {
  local name=$1
  shift
  "$@" &
  background+=($!)
  background_names+=("$name")
}
wait_for_installs() {
  local i code
  for i in "${!background[@]}"; do
    code=0
    wait "${background[$i]}" || code=$?
    if [ "$code" != 0 ]; then
      echo "== install ${background_names[$i]}: FAILED ($code)" >&2
      exit 1
    fi
  done
  background=()
  background_names=()
}

as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  else
    echo "installing system packages needs root or sudo: $*" >&2
    return 1
  fi
}

install_system_packages() {
  local entry missing=()
  for entry in "${system_packages[@]}"; do
    command -v "${entry%%:*}" >/dev/null 2>&1 || missing+=("${entry#*:}")
  done
  [ "${#missing[@]}" = 0 ] && return 0
  # The package lists are fetched only when a package is not found without them.
  as_root apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || {
    as_root apt-get update -q >/dev/null && as_root apt-get install -y -q "${missing[@]}" >/dev/null
  }
}

# The virtual environment, with uv in it: uv installs in seconds what takes pip minutes (the
# agent CLIs' environments too). Without it (no network for it, say) pip does everything.
prepare_venv() {
  [ -x .venv/bin/python ] || python3 -m venv .venv
  [ -x .venv/bin/uv ] || .venv/bin/python -m pip install -q uv >/dev/null 2>&1 || true
}

install_python() {
  if [ -x .venv/bin/uv ] &&
    .venv/bin/uv pip install -q --python .venv/bin/python -e ".[$python_extras]"; then
    return 0
  fi
  # pip would byte-compile every file it installs, one at a time, before it returns (minutes on
  # two cores, with nothing else running): compile_python does it beside the checks instead.
  .venv/bin/python -m pip install -q --no-compile -e ".[$python_extras]"
}

# The installed packages' bytecode, written while the lint and type checks run (mypy keeps one
# core busy): the tests' many short-lived interpreters then never compile them again, sandboxed
# ones cannot write it. A file that does not compile (a template in some package) is skipped,
# as pip skips it.
compile_python() {
  local packages
  packages=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  .venv/bin/python -m compileall -q "$packages" >/dev/null || true
}

# The real agent CLIs, pinned, into .cache/clis (skipped when already there). The installer
# needs only the standard library (and uses the venv's uv), so it starts before the package is
# installed.
install_clis() {
  if [ -x scripts/install_clis.sh ]; then
    scripts/install_clis.sh
  fi
}

in_background "system packages" install_system_packages
prepare_venv
in_background "agent CLIs" install_clis
install_python
in_background "bytecode" compile_python

# Ubuntu 24.04 lets AppArmor refuse unprivileged user namespaces, which bubblewrap needs when the
# tests do not run as root. Allow them on test machines where we may.
restrict=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [ -r "$restrict" ] && [ "$(cat "$restrict")" = 1 ]; then
  as_root sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0 || true
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
# pyproject.toml configures them) and strict types on src/. They run while the CLIs install.
check "ruff check" .venv/bin/ruff check src tests benchmarks scripts
check "ruff format" .venv/bin/ruff format --check src tests benchmarks scripts
check "mypy" .venv/bin/mypy

wait_for_installs

# loadgroup keeps the tests that share one expensive fixture (marked xdist_group) on one worker,
# and tests/conftest.py starts the slow tests first, so no worker is left alone with them at the
# end.
parallel=(-n 2 --dist loadgroup)
if [ "$#" -gt 0 ]; then
  check "pytest $*" .venv/bin/python -m pytest "${parallel[@]}" "$@"
else
  # Everything in parallel, then alone the tests that starve the whole machine for a moment (a
  # fork bomb), so that they cannot slow or break their neighbours. Both must pass, and the
  # solo step must find its tests: they are the only check that a fork bomb is contained.
  # The slowest tests are listed: the whole run has to stay within CI's time budget.
  check "tests" .venv/bin/python -m pytest "${parallel[@]}" -m "not solo" --durations=25
  check "solo tests" .venv/bin/python -m pytest -m solo
fi

if [ "${#failed[@]}" -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "All checks passed."
