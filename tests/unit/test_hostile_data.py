"""Readers of agent-made data: whatever they are fed, they return or raise AgentDataError."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harnessdrive.errors import AgentDataError
from harnessdrive.grading import hostile
from harnessdrive.grading.differential.command_candidate import _answer as _command_answer
from harnessdrive.grading.differential.execute import (
    MAX_FORBIDDEN,
    CaseAnswer,
    _line_json,
    _Worker,
)
from harnessdrive.grading.differential.kind import MIN_ANSWER_BOUND, answer_bound
from harnessdrive.grading.differential.results import KEPT_CHARS, Counterexample
from harnessdrive.grading.hostile import REFUSED
from harnessdrive.grading.junit import read_cases
from harnessdrive.grading.tamper import find_tampering
from harnessdrive.sandbox.process import ProcessResult
from harnessdrive.workspace.changes import Changes, FileChange

DEEP = 100_000
ENCODINGS = ["utf-8", "UTF-16", "utf-7", "shift_jis", "euc-jp", "x-no-such", "ascii", "latin-1",
             "cp1252", "utf-32", "big5", "", "utf-8'?><x"]  # fmt: skip
JUNIT_OK = b'<testsuite><testcase classname="t" name="a"/><testcase name="b"><failure/></testcase>'
HOSTILE = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=30,
)
nesting = st.builds(
    lambda opener, depth, tail: opener * depth + tail,
    st.sampled_from([b"[", b"{", b'{"a":', b"[[{", b"a = [", b"x = {y = "]),
    st.integers(min_value=1, max_value=DEEP),
    st.binary(max_size=20),
)
hostile_bytes = (
    st.binary(max_size=2000)
    | nesting
    | st.integers(min_value=4000, max_value=5000).map(lambda n: b"9" * n)
    | st.sampled_from([b"1e999", b"-1e999", b"NaN", b"\xff\xfe\x00", b"\x00" * 50])
    | json_values.map(lambda v: json.dumps(v).encode())
)


def only_agent_errors(read: object, *args: object) -> None:
    with contextlib.suppress(AgentDataError):
        read(*args)  # type: ignore[operator]


@HOSTILE
@given(hostile_bytes)
def test_json_toml_and_ini_readers_raise_only_agent_data_errors(data: bytes) -> None:
    only_agent_errors(hostile.load_json, data, "x.json")
    only_agent_errors(hostile.load_toml, data, "x.toml")
    only_agent_errors(hostile.load_ini, data, "x.cfg")


def test_nesting_past_the_bound_is_refused_before_parsing_whatever_the_stack() -> None:
    with pytest.raises(AgentDataError, match="deeper"):
        hostile.load_json(b"[" * DEEP + b"]" * DEEP, "package.json")
    with pytest.raises(AgentDataError, match="deeper"):
        hostile.load_toml(b"a = " + b"[" * DEEP + b"]" * DEEP, "pyproject.toml")
    # Brackets inside strings are not nesting.
    assert hostile.load_json(json.dumps({"a": "[" * 500}).encode(), "x") == {"a": "[" * 500}
    assert hostile.load_toml(b'a = "' + b"[" * 500 + b'"', "x") == {"a": "[" * 500}


def test_oversized_data_is_refused_unread() -> None:
    with pytest.raises(AgentDataError, match="over 10 bytes"):
        hostile.load_json(b"[1, 2, 3, 4, 5]", "x", max_bytes=10)


def write_junit(folder: Path, data: bytes) -> Path:
    path = folder / "junit.xml"
    path.write_bytes(data)
    return path


@HOSTILE
@given(data=hostile_bytes | st.binary(max_size=200).map(lambda b: JUNIT_OK + b))
def test_the_junit_reader_raises_only_agent_data_errors(tmp_path: Path, data: bytes) -> None:
    only_agent_errors(read_cases, write_junit(tmp_path, data))


@HOSTILE
@given(encoding=st.sampled_from(ENCODINGS) | st.text(max_size=12))
def test_a_report_declaring_any_encoding_is_read_or_refused_as_the_agents(
    tmp_path: Path, encoding: str
) -> None:
    declared = f'<?xml version="1.0" encoding="{encoding}"?>'.encode("utf-8", "replace")
    only_agent_errors(read_cases, write_junit(tmp_path, declared + JUNIT_OK + b"</testsuite>"))


def test_an_unsupported_declared_encoding_is_the_agents_failure(tmp_path: Path) -> None:
    report = b'<?xml version="1.0" encoding="shift_jis"?>' + JUNIT_OK + b"</testsuite>"
    with pytest.raises(AgentDataError, match="junit"):
        read_cases(write_junit(tmp_path, report))


def test_a_report_is_read_streamed_and_bounded(tmp_path: Path) -> None:
    report = write_junit(tmp_path, JUNIT_OK + b"</testsuite>")
    assert [(c.name, c.outcome) for c in read_cases(report)] == [("a", "passed"), ("b", "failed")]
    with pytest.raises(AgentDataError, match="over 10 bytes"):
        read_cases(report, max_bytes=10)
    deep = b"<testsuite>" + b"<x>" * 1000 + b"</x>" * 1000 + b"</testsuite>"
    with pytest.raises(AgentDataError, match="deeper"):
        read_cases(write_junit(tmp_path, deep))
    # One attribute longer than any token the reader holds at once.
    huge = b'<testsuite><testcase name="' + b"a" * (5 * 1024 * 1024) + b'"/></testsuite>'
    with pytest.raises(AgentDataError, match="single token"):
        read_cases(write_junit(tmp_path, huge))
    # Long text is never held: a report whose output is large but in pieces is read.
    chatty = b"<testsuite><testcase name='a'><system-out>"
    chatty += b"line\n" * (2 * 1024 * 1024) + b"</system-out></testcase></testsuite>"
    assert [c.outcome for c in read_cases(write_junit(tmp_path, chatty))] == ["passed"]


def test_a_linked_report_is_refused(tmp_path: Path) -> None:
    target = write_junit(tmp_path, JUNIT_OK + b"</testsuite>")
    link = tmp_path / "link.xml"
    link.symlink_to(target)
    with pytest.raises(AgentDataError, match="regular file"):
        read_cases(link)


def changed(path: str) -> FileChange:
    return FileChange(path, "modified", "100644", "100644", "b" * 40, 1, 1, False)


@HOSTILE
@given(
    name=st.sampled_from(["pyproject.toml", "sub/pyproject.toml", "package.json", "setup.cfg"]),
    old=hostile_bytes | st.none(),
    new=hostile_bytes,
)
def test_the_tamper_scan_ends_in_findings_never_an_exception(
    name: str, old: bytes | None, new: bytes
) -> None:
    change = changed(name)
    found = find_tampering(
        Changes("a", "b", (change,), b""),
        protected=(),
        new_content={"b" * 40: new},
        read_base=lambda path: old,
    )
    assert all(f.code in ("test-config", "package-metadata", "runner-shadow") for f in found)


def test_a_deeply_nested_pyproject_or_package_json_is_a_finding() -> None:
    for name, deep in [
        ("pyproject.toml", b"[tool.pytest.ini_options]\nx = " + b"[" * DEEP),
        ("package.json", b'{"scripts": ' + b"[" * DEEP),
    ]:
        found = find_tampering(
            Changes("a", "b", (changed(name),), b""),
            protected=(),
            new_content={"b" * 40: deep},
            read_base=lambda path: b"{}" if path.endswith(".json") else b"",
        )
        assert found, name
        assert found[0].tampers


class _Bounded:
    max_answer_bytes = 1000


BOUNDED = _Bounded()

results_lines = (
    hostile_bytes.map(lambda b: b.decode("utf-8", "replace"))
    | st.sampled_from(['{"i": 1e999, "answer": 1}', '{"i": "9' + "9" * 5000 + '"}', '{"i": []}'])
    | st.integers(min_value=1, max_value=DEEP).map(lambda n: '{"i": 0, "answer": ' + "[" * n)
)


@HOSTILE
@given(results_lines)
def test_a_differential_workers_results_line_is_an_answer_or_garbled(line: str) -> None:
    try:
        row = _line_json(line)
        _Worker._answered(BOUNDED, row, {}, {0})  # type: ignore[arg-type]
    except REFUSED:
        pass  # a garbled line: its case stays unanswered, the grader goes on


def test_a_stored_counterexample_keeps_an_excerpt_and_the_digest_of_a_huge_answer() -> None:
    huge = ["x" * 1000] * 10_000
    example = Counterexample.bounded(
        case="c1", bucket="b", rules=(), input=[1], expected=[2], actual=huge,
        size_before=1, size_after=1,
    )  # fmt: skip
    stored = example.model_dump_json()
    assert len(stored) < 3 * KEPT_CHARS
    assert example.cut == ("actual",)
    text = json.dumps(huge, sort_keys=True, separators=(",", ":"))
    assert example.digests["actual"] == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert example.input == [1] and example.expected == [2]


def test_an_answer_longer_than_any_expected_one_is_held_as_its_size_and_digest() -> None:
    got: dict[int, CaseAnswer] = {}
    assert _Worker._answered(BOUNDED, {"i": 0, "answer": "x" * 5000}, got, {0})  # type: ignore[arg-type]
    assert got[0].answer is None
    assert got[0].error is not None and "5002 characters" in got[0].error
    assert "sha256:" in got[0].error
    assert answer_bound(()) == MIN_ANSWER_BOUND


def test_an_answer_nested_past_the_answer_bound_is_a_garbled_line() -> None:
    # Deeper than any expected answer, yet well inside what the interpreter parses: refused
    # here, so no later comparison or stored counterexample meets it.
    deep = hostile.ANSWER_DEPTH + 50
    with pytest.raises(AgentDataError, match="deeper"):
        _line_json('{"i": 0, "answer": ' + "[" * deep + "]" * deep + "}")
    fits = hostile.ANSWER_DEPTH - 1
    row = _line_json('{"i": 0, "answer": ' + "[" * fits + "]" * fits + "}")
    assert row["i"] == 0


def _reader_of(results: Path) -> _Worker:
    worker = object.__new__(_Worker)  # only the reading half: no process is started
    worker.results, worker.max_answer_bytes = results, 1000
    worker._offset, worker._pending = 0, b""
    worker._current, worker._begun, worker.load_error = None, set(), None
    worker.forbidden = set()
    return worker


def _read_within(
    worker: _Worker, waiting: set[int], seconds: float = 10.0
) -> dict[int, CaseAnswer]:
    got: dict[int, CaseAnswer] = {}
    reading = threading.Thread(target=worker._read, args=(got, waiting), daemon=True)
    reading.start()
    reading.join(seconds)
    assert not reading.is_alive(), "reading the results file never returned"
    return got


def test_a_results_file_the_candidate_replaced_by_a_pipe_is_never_waited_on(
    tmp_path: Path,
) -> None:
    results = tmp_path / "results.txt"
    os.mkfifo(results)  # no writer ever opens it
    assert _read_within(_reader_of(results), {0}) == {}


def test_a_results_file_the_candidate_replaced_by_a_link_is_not_followed(tmp_path: Path) -> None:
    # A file outside the candidate's sight holding answers in the worker's own format (another
    # worker's results, say) must never be read as the candidate's.
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text('R {"i": 0, "answer": [1, 2]}\n')
    results = tmp_path / "results.txt"
    results.symlink_to(elsewhere)
    assert _read_within(_reader_of(results), {0}) == {}
    # The same line in the file itself is read.
    results.unlink()
    results.write_text('R {"i": 0, "answer": [1, 2]}\n')
    assert _read_within(_reader_of(results), {0})[0].answer == [1, 2]


DID_NOT_PRINT = "did not print one JSON value"
CLEAN_EXIT = ProcessResult(exit_code=0, timed_out=False, seconds=0.1)


@HOSTILE
@given(printed=hostile_bytes)
def test_a_command_candidates_printed_answer_is_an_answer_or_its_cases_failure(
    tmp_path: Path, printed: bytes
) -> None:
    out = tmp_path / "stdout"
    out.write_bytes(printed)
    answer, error = _command_answer(CLEAN_EXIT, out, 5.0)
    assert error is None or (answer is None and error == DID_NOT_PRINT)


def test_a_command_candidates_answer_nested_or_unreadable_is_its_cases_failure(
    tmp_path: Path,
) -> None:
    out = tmp_path / "stdout"
    deep = hostile.ANSWER_DEPTH + 50  # inside the interpreter's stack, past the bound
    out.write_bytes(b"[" * deep + b"]" * deep)
    assert _command_answer(CLEAN_EXIT, out, 5.0) == (None, DID_NOT_PRINT)
    out.write_bytes(b"9" * 5000)  # past the integer conversion limit
    assert _command_answer(CLEAN_EXIT, out, 5.0) == (None, DID_NOT_PRINT)
    out.unlink()
    out.mkdir()  # a folder where the output was
    assert _command_answer(CLEAN_EXIT, out, 5.0) == (None, DID_NOT_PRINT)


LONE_SURROGATE = '{"i": 0, "answer": ["\\udcff"], "error": null}'


def test_an_answer_utf8_cannot_hold_is_garbled_not_a_result_that_cannot_be_stored(
    tmp_path: Path,
) -> None:
    # A lone surrogate, escaped in valid JSON: kept, it would fail the writing of the verdict.
    with pytest.raises(REFUSED):
        _line_json(LONE_SURROGATE)
    with pytest.raises(REFUSED):
        _line_json('{"i": 0, "answer": null, "error": "\\ud800"}')
    out = tmp_path / "stdout"
    out.write_text('["\\udcff"]')
    assert _command_answer(CLEAN_EXIT, out, 5.0) == (None, DID_NOT_PRINT)
    # Escaped characters UTF-8 holds are answers as before.
    assert _line_json('{"i": 0, "answer": ["\\u00e9\\ud83d\\ude00"]}')["answer"] == ["é😀"]


def test_refusals_the_candidate_writes_itself_are_kept_bounded(tmp_path: Path) -> None:
    # Each kept refusal becomes a finding: a flood of distinct ones must not fill the verdict.
    results = tmp_path / "results.txt"
    results.write_text("".join(f'F "import module_{n}"\n' for n in range(10_000)))
    worker = _reader_of(results)
    _read_within(worker, {0})
    assert 0 < len(worker.forbidden) <= MAX_FORBIDDEN
