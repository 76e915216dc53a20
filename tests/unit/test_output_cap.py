"""What a process prints is kept up to a limit: the head and the tail, with a note and the count."""

from __future__ import annotations

import io
import time
import uuid
from pathlib import Path

import psutil
import pytest

from harnessdrive.sandbox.limits import Limits, MiB
from harnessdrive.sandbox.output import (
    DEFAULT_HEAD_BYTES,
    DEFAULT_TAIL_BYTES,
    CappedWriter,
    OutputCap,
    cut_note,
)
from tests.sandboxes import box_for_kind

KINDS = ["none", "bwrap"]
LINES = "python3 -c \"import sys\nfor i in range({n}): sys.{stream}.write('%09d\\n' % i)\""


def _lines(start: int, stop: int) -> bytes:
    return b"".join(b"%09d\n" % i for i in range(start, stop))


def test_a_short_stream_is_kept_whole() -> None:
    sink = io.BytesIO()
    writer = CappedWriter(sink, OutputCap(head=10, tail=10))
    writer.write(b"0123456789abcdefghij")
    record = writer.close()
    assert sink.getvalue() == b"0123456789abcdefghij"
    assert (record.written, record.kept, record.cut) == (20, 20, False)


def test_a_long_stream_keeps_head_note_and_tail_whatever_the_chunks() -> None:
    data = bytes(range(256)) * 40
    for chunk in (1, 7, 100, 4096, len(data)):
        sink = io.BytesIO()
        writer = CappedWriter(sink, OutputCap(head=300, tail=200))
        for i in range(0, len(data), chunk):
            writer.write(data[i : i + chunk])
        record = writer.close()
        assert sink.getvalue() == data[:300] + cut_note(len(data), 300, 200) + data[-200:]
        assert (record.written, record.kept, record.cut) == (len(data), 500, True)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_an_agent_printing_far_past_the_cap_leaves_a_small_log(tmp_path: Path, kind: str) -> None:
    box = box_for_kind(tmp_path, kind, Limits(file_size=4 * MiB))
    count = 2_000_000  # 20 MB on each stream, well past the 2 MB + 2 MB kept
    script = LINES.format(n=count, stream="stdout") + "; " + LINES.format(n=count, stream="stderr")
    result = box.run(script, timeout=120)
    assert result.exit_code == 0 and result.limit is None  # a pipe is no file: no size limit hit
    for path, record in ((box.out, result.stdout_record), (box.err, result.stderr_record)):
        assert record is not None
        assert record.written == count * 10 and record.cut
        assert record.kept == DEFAULT_HEAD_BYTES + DEFAULT_TAIL_BYTES
        data = path.read_bytes()
        note = cut_note(count * 10, DEFAULT_HEAD_BYTES, DEFAULT_TAIL_BYTES)
        assert len(data) == record.kept + len(note)
        all_lines = _lines(0, count)
        assert data == all_lines[:DEFAULT_HEAD_BYTES] + note + all_lines[-DEFAULT_TAIL_BYTES:]


@pytest.mark.parametrize("kind", KINDS)
def test_one_log_for_both_streams_keeps_their_order(tmp_path: Path, kind: str) -> None:
    box = box_for_kind(tmp_path, kind)
    log = box.root / "both.log"
    result = box.sandbox.run(
        ["bash", "-c", "echo one; echo two >&2; echo three"],
        cwd=box.work,
        env={"PATH": "/usr/bin:/bin"},
        timeout=30,
        stdout=log,
        stderr=log,
        isolation=box.isolation(),
    )
    assert log.read_bytes() == b"one\ntwo\nthree\n"
    assert result.stdout_record is not None and result.stdout_record.written == 14
    assert result.stderr_record == result.stdout_record


@pytest.mark.parametrize("kind", KINDS)
def test_a_daemon_holding_the_pipe_never_holds_up_the_run(tmp_path: Path, kind: str) -> None:
    box = box_for_kind(tmp_path, kind)
    token = f"hd-{uuid.uuid4().hex[:10]}"
    started = time.monotonic()
    result = box.run(f"(setsid bash -c 'exec -a {token} sleep 300' &); echo started", timeout=30)
    assert result.exit_code == 0
    assert box.output() == "started\n"
    assert time.monotonic() - started < 20


def test_a_process_that_escaped_the_kill_cannot_hold_the_pipe_open(tmp_path: Path) -> None:
    """Without bubblewrap a daemon that drops its environment outlives the run (see
    test_sandbox_process); it keeps our pipe open, and the run still ends."""
    box = box_for_kind(tmp_path, "none")
    token = f"hd-{uuid.uuid4().hex[:10]}"
    started = time.monotonic()
    try:
        result = box.run(
            f"(env -i setsid bash -c 'exec -a {token} sleep 60' &); echo started", timeout=30
        )
        assert result.exit_code == 0 and box.output() == "started\n"
        assert time.monotonic() - started < 20
    finally:
        for proc in psutil.process_iter(["cmdline"]):
            if token in " ".join(proc.info["cmdline"] or []):
                proc.kill()
