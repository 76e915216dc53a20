"""The image cache: one unpacked root per digest, layers and whiteouts applied, the image's
config read; OCI layouts and docker save archives alike; listed, inspected and pruned."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harnessdrive.cli.app import run_cli
from harnessdrive.environments.oci.cache import ImageCache
from harnessdrive.environments.oci.sources import dockerfile_source, parse_image
from harnessdrive.errors import ImageError
from harnessdrive.sandbox.runner import Isolation, get_sandbox
from tests.images import image_cache, python_image
from tests.sandboxes import require_bwrap

pytestmark = pytest.mark.slow


def test_an_image_is_unpacked_once_with_its_layers_and_config(tmp_path: Path) -> None:
    cache = ImageCache(tmp_path / "cache")
    source = parse_image(python_image(), tmp_path)
    root = cache.resolve(source)
    stamp = (root.root.parent / "image.json").stat().st_mtime_ns
    assert cache.resolve(source) == root
    assert (root.root.parent / "image.json").stat().st_mtime_ns == stamp  # not unpacked again
    # The second layer's whiteout removed /etc/motd of the first, and added its own file.
    assert not (root.root / "etc" / "motd").exists()
    assert (root.root / "etc" / "image-layer").read_text() == "second layer\n"
    assert (root.workdir, root.env["HARNESSDRIVE_TEST_IMAGE"]) == ("/app", "1")
    assert root.digest.startswith("sha256:")
    assert [i.digest for i in cache.images()] == [root.digest]


def test_a_docker_save_archive_runs_like_its_layout(tmp_path: Path) -> None:
    require_bwrap()
    layout = python_image()
    archive = tmp_path / "image.tar"
    subprocess.run(
        ["skopeo", "copy", "--quiet", layout, f"docker-archive:{archive}:test/image:1"],
        check=True,
        capture_output=True,
    )
    root = ImageCache(tmp_path / "cache").resolve(parse_image(str(archive), tmp_path))
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "out.txt"
    result = (
        get_sandbox("bwrap")
        .with_image(root)
        .run(
            [
                "/bin/sh",
                "-c",
                "pwd; cat /etc/image-layer; echo $HARNESSDRIVE_TEST_IMAGE; touch made",
            ],
            cwd=work,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            timeout=60,
            stdout=out,
            stderr=out,
            isolation=Isolation(writable=(work,)),
        )
    )
    assert result.ok, out.read_text()
    assert out.read_text().split() == ["/app", "second", "layer", "1"]
    assert (work / "made").is_file()  # the workspace, shown at the image's working folder


def test_a_dockerfile_is_built_with_buildah_and_runs_like_any_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    if shutil.which("buildah") is None:
        if os.environ.get("CI"):
            pytest.fail("buildah not installed (scripts/test.sh installs it)")
        pytest.skip("buildah not installed")
    # The base as a user has it: in buildah's own storage, never fetched from a registry.
    layout = python_image()
    base = f"localhost/harnessdrive-test/debian-python:{layout.rsplit('-', 1)[-1][:12]}"
    subprocess.run(
        ["skopeo", "copy", "--quiet", layout, f"containers-storage:{base}"],
        check=True,
        capture_output=True,
    )
    # Where buildah cannot start its container runtime (cgroups it cannot use, as here), its
    # own variable chooses chroot isolation; harnessdrive passes the environment on as it is.
    monkeypatch.setenv("BUILDAH_ISOLATION", "chroot")
    folder = tmp_path / "task" / "environment"
    folder.mkdir(parents=True)
    (folder / "answer.txt").write_text("forty-two\n")
    (folder / "Dockerfile").write_text(
        f"FROM {base}\n"
        "COPY answer.txt /opt/answer.txt\n"
        "RUN echo built-by-run > /opt/run.txt\n"
        "ENV HARNESSDRIVE_BUILT=yes\n"
        "WORKDIR /srv/work\n"
    )
    source = dockerfile_source("environment/Dockerfile", tmp_path / "task")
    root = ImageCache(tmp_path / "cache").resolve(source)
    assert (root.root / "opt" / "run.txt").read_text() == "built-by-run\n"
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "out.txt"
    result = (
        get_sandbox("bwrap")
        .with_image(root)
        .run(
            ["/bin/sh", "-c", "pwd; cat /opt/answer.txt /opt/run.txt; echo $HARNESSDRIVE_BUILT"],
            cwd=work,
            env=root.environment({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}),
            timeout=60,
            stdout=out,
            stderr=out,
            isolation=Isolation(writable=(work,)),
        )
    )
    assert result.ok, out.read_text()
    assert out.read_text().split() == ["/srv/work", "forty-two", "built-by-run", "yes"]
    # The cache holds the image; the builder keeps no tagged copy of it to pile up.
    listed = subprocess.run(
        ["buildah", "images", "--format", "{{.Name}}:{{.Tag}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"harnessdrive-build:{source.key}" not in listed


def test_an_image_that_is_not_there_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="no OCI layout"):
        parse_image("oci:./missing:tag", tmp_path)
    (tmp_path / "junk.tar").write_bytes(b"not an archive")
    with pytest.raises(ImageError, match="cannot be copied"):
        ImageCache(tmp_path / "cache").resolve(parse_image(str(tmp_path / "junk.tar"), tmp_path))


def test_images_command_lists_inspects_and_prunes_and_doctor_reports_the_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HARNESSDRIVE_IMAGE_CACHE", str(tmp_path / "cache"))
    root = ImageCache().resolve(parse_image(python_image(), tmp_path))
    assert run_cli(["images", "list"]) == 0
    listed = capsys.readouterr().out
    assert root.digest[:19] in listed and "MiB" in listed
    assert run_cli(["images", "inspect", root.digest[7:19]]) == 0
    inspected = json.loads(capsys.readouterr().out)
    assert (inspected["digest"], inspected["workdir"]) == (root.digest, "/app")
    assert run_cli(["images", "inspect", "ffff"]) == 2
    assert "no image matches" in capsys.readouterr().err
    from harnessdrive.cli.doctor import image_checks

    checks = {c.name: c for c in image_checks()}
    assert checks["skopeo"].ok and checks["umoci"].ok
    assert "1 image(s)" in checks["image cache"].detail
    assert run_cli(["images", "prune"]) == 0
    assert ImageCache().images() == []
    assert not root.root.exists()


def test_the_images_user_is_honoured_and_root_stays_ours(tmp_path: Path) -> None:
    from dataclasses import replace

    require_bwrap()
    root = ImageCache(image_cache() / "unpacked").resolve(parse_image(python_image(), tmp_path))
    work = tmp_path / "work"
    work.mkdir()
    seen = {}
    for user in ("daemon", "65534:65534", "root", ""):
        out = tmp_path / f"out-{user or 'none'}.txt"
        result = (
            get_sandbox("bwrap")
            .with_image(replace(root, user=user))
            .run(
                ["/bin/sh", "-c", "id -u; id -g; id -un; touch mine-$(id -u)"],
                cwd=work,
                env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                timeout=60,
                stdout=out,
                stderr=out,
                isolation=Isolation(writable=(work,)),
            )
        )
        assert result.ok, out.read_text()
        seen[user] = out.read_text().split()
    assert seen["daemon"] == ["1", "1", "daemon"]
    assert seen["65534:65534"][:2] == ["65534", "65534"]
    # Root (or no user) is the sandbox's own unprivileged user, as on the host.
    assert seen["root"][0] == seen[""][0] != "0"
    # Whoever it is inside, the files it writes are ours on the host.
    assert {p.stat().st_uid for p in work.iterdir()} == {os.getuid()}
