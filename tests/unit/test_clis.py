"""The CLI installer's bookkeeping: stamps, paths, and what happens when nothing is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessdrive.testing import clis


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(clis.CACHE_ENV, str(tmp_path))
    return tmp_path


def stamp(cache: Path, name: str, version: str) -> Path:
    pin = clis.PINS[name]
    folder = cache / f"{name}-{pin.version}"
    executable = folder / pin.executable
    executable.parent.mkdir(parents=True)
    executable.write_text("#!/bin/sh\n")
    payload = {"package": pin.package, "version": version}
    (folder / clis.STAMP_NAME).write_text(json.dumps(payload))
    return executable


def test_binary_of_a_missing_cli_says_how_to_install(cache: Path) -> None:
    with pytest.raises(clis.CliNotInstalledError, match=r"@openai/codex@0\.171\.0 .*install_clis"):
        clis.binary("codex")


def test_stamped_install_is_found_and_not_reinstalled(cache: Path) -> None:
    executable = stamp(cache, "pi", clis.PINS["pi"].version)
    # Would run npm if it did not trust the stamp; a stamped CLI takes no time at all.
    assert clis.install(["pi"]) == {"pi": 0.0}
    assert clis.binary("pi") == executable
    assert clis.cache_root() == cache.resolve()


def test_a_stamp_for_another_version_does_not_count(cache: Path) -> None:
    stamp(cache, "gemini", "0.0.1")
    assert not clis.is_installed("gemini")
    with pytest.raises(clis.CliNotInstalledError):
        clis.binary("gemini")


def test_unknown_cli_names_are_refused() -> None:
    with pytest.raises(KeyError, match="unknown CLI 'cursor'"):
        clis.binary("cursor")


def test_every_pin_comes_from_npm_or_pypi_with_an_exact_version() -> None:
    assert set(clis.PINS) == {
        "claude",
        "codex",
        "gemini",
        "opencode",
        "pi",
        "qwen",
        "aider",
        "mini",
    }
    for pin in clis.PINS.values():
        assert pin.registry in ("npm", "pypi")
        assert all(part.isdigit() for part in pin.version.split("."))
