#!/usr/bin/env bash
# Install the pinned agent CLIs used by the `cli` tests into .cache/clis/ (or $HARNESSDRIVE_CLI_CACHE),
# where a harnessdrive run from this checkout also finds them (`harnessdrive install-clis` is the
# same for an installed harnessdrive, into a user cache).
# Idempotent: an already stamped version is skipped. Usage: scripts/install_clis.sh [NAME ...]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$repo/.venv/bin/python" ]]; then python="$repo/.venv/bin/python"; else python=python3; fi
fi
PYTHONPATH="$repo/src${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m harnessdrive.testing.clis install "$@"
