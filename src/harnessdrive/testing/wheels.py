"""Python wheels built in memory, so tests can install real dependencies without an index.

    repo.commit("Use greet", {"wheels/greet-1.0-py3-none-any.whl": make_wheel("greet", "1.0",
        {"greet/__init__.py": "def hello():\\n    return 'hi'\\n"}),
        "requirements.txt": "./wheels/greet-1.0-py3-none-any.whl\\n"})

pip installs a wheel file named in a requirements file without asking any index.
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from collections.abc import Mapping


def wheel_name(name: str, version: str) -> str:
    return f"{name}-{version}-py3-none-any.whl"


def make_wheel(name: str, version: str, files: Mapping[str, str | bytes]) -> bytes:
    """A pure-Python wheel holding ``files`` (paths inside site-packages)."""
    dist_info = f"{name}-{version}.dist-info"
    contents: dict[str, bytes] = {
        path: data.encode() if isinstance(data, str) else data for path, data in files.items()
    }
    contents[f"{dist_info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    ).encode()
    contents[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: harnessdrive.testing\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    record = [f"{path},sha256={_digest(data)},{len(data)}" for path, data in contents.items()]
    record.append(f"{dist_info}/RECORD,,")
    contents[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in contents.items():
            # A fixed date: the same files give the same bytes, so commit shas stay stable.
            info = zipfile.ZipInfo(path, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


WHEEL_WRITER = """\
import base64, hashlib, os, zipfile


def write_wheel(directory, name, version, files, metadata=None):
    info = f"{name}-{version}.dist-info"
    files = dict(files)
    plain = f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n"
    files[f"{info}/METADATA"] = metadata or plain
    files[f"{info}/WHEEL"] = "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\\n".join(record + [f"{info}/RECORD,,"]) + "\\n"
    wheel = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel
"""
"""Python source for a build backend kept in a test project's tree, which runs without
harnessdrive: ``write_wheel(directory, name, version, files, metadata=None)`` writes a wheel of
text ``files`` into ``directory`` and returns its name."""


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
