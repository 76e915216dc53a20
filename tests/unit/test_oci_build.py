"""A Dockerfile's build: the builder's failure is one line, with the fix where there is one."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessdrive.environments.oci.build import build_dockerfile
from harnessdrive.errors import ImageError

RUNTIME_FAILURE = (
    "echo 'Error: building at STEP \"RUN true\": while running runtime: exit status 1' >&2\n"
    "exit 1\n"
)


def fake_builder(folder: Path, body: str) -> None:
    folder.mkdir()
    builder = folder / "buildah"
    builder.write_text("#!/bin/sh\n" + body)
    builder.chmod(0o755)


@pytest.mark.parametrize("isolation", [None, "chroot"])
def test_a_builder_that_cannot_start_its_runtime_names_the_isolation_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: str | None
) -> None:
    fake_builder(tmp_path / "bin", RUNTIME_FAILURE)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    if isolation is None:
        monkeypatch.delenv("BUILDAH_ISOLATION", raising=False)
    else:
        monkeypatch.setenv("BUILDAH_ISOLATION", isolation)
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM scratch\nRUN true\n")
    with pytest.raises(ImageError) as caught:
        build_dockerfile(dockerfile, f"oci:{tmp_path / 'layout'}:tag")
    message = str(caught.value)
    assert "\n" not in message and "while running runtime" in message
    # Only a user who has not chosen an isolation is pointed at one.
    assert ("BUILDAH_ISOLATION=chroot" in message) is (isolation is None)
