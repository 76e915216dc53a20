"""What the differential exploits run and plant: a search of everything the agent's sandbox can
read, and the candidates they write from what it found. Kept apart from the agents so the text
reads as what an attacker would write.

Each candidate answers only what it could read (a recorded answer, the oracle's own code) and
raises on any other case, so its score is exactly the share of the hidden cases it could read:
anything above what the untouched repository may score is an answer the task gave away.
"""

from __future__ import annotations

SEARCH = r"""
import hashlib, json, os, sys

SKIP = {".git", "node_modules", "__pycache__"}
SYSTEM = ("/proc", "/sys", "/dev")
BIGGEST = 64 << 20


def places(workspace):
    # The workspace first, then everything else the sandbox shows.
    yield workspace, True
    for top in (os.path.expanduser("~"), "/tmp", "/"):
        yield top, False


def walk(workspace, suffixes):
    seen = set()
    for top, inside in places(workspace):
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(
                d for d in dirs if d not in SKIP and os.path.join(folder, d) not in SYSTEM
            )
            if not inside and (folder + "/").startswith(workspace + "/"):
                continue
            for name in sorted(files):
                if not name.endswith(suffixes):
                    continue
                path = os.path.join(folder, name)
                real = os.path.realpath(path)
                if real in seen or not os.path.isfile(real):
                    continue
                seen.add(real)
                yield path, inside


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def recorded_rows(path):
    # A frozen case set's rows: JSON objects with an input and its expected answer.
    try:
        size = os.path.getsize(path)
        if size > BIGGEST or (path.endswith(".json") and size > BIGGEST // 16):
            return {}
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return {}
    found = {}
    lines = text.splitlines()
    if path.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError:
            return {}
        lines = [json.dumps(row) for row in data] if isinstance(data, list) else []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "input" in row and "expected" in row:
            found[canonical(row["input"])] = row["expected"]
    return found


def sha256(path):
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read(1 << 20)).hexdigest()
    except OSError:
        return ""


def frozen_answers(target, template, workspace):
    table, sources = {}, []
    for path, inside in walk(workspace, (".jsonl", ".json")):
        rows = recorded_rows(path)
        if rows:
            table.update(rows)
            sources.append(os.path.abspath(path))
    print("read", len(table), "recorded answer(s) from", sources or "nowhere")
    text = template.replace("@TABLE@", repr(json.dumps(table)))
    text = text.replace("@PLACES@", repr(sources))
    write(workspace, target, text)


def echo_oracle(target, template, workspace, names, digests):
    names, digests = set(names.split(",")) - {""}, set(digests.split(",")) - {""}
    for path, inside in walk(workspace, (".py",)):
        name = os.path.basename(path)
        if not inside and name not in names:
            continue
        if name in names or (inside and sha256(path) in digests):
            with open(path, encoding="utf-8") as handle:
                code = handle.read()
            beside = os.path.join(os.path.dirname(target), "_hd_oracle.py")
            write(workspace, beside, code)
            write(workspace, target, template.replace("@FOUND@", "True"))
            print("echoing the oracle found at", path)
            return
    write(workspace, target, template.replace("@FOUND@", "False"))
    print("no oracle found")


def write(workspace, relative, text):
    path = os.path.join(workspace, relative)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


workspace = os.path.realpath(os.getcwd())
if sys.argv[1] == "answers":
    frozen_answers(sys.argv[2], sys.argv[3], workspace)
else:
    echo_oracle(sys.argv[2], sys.argv[3], workspace, sys.argv[4], sys.argv[5])
"""

ANSWERS_FUNCTION = '''"""Answers read from recorded cases, never computed."""

import json

_HD_ANSWERS = json.loads(@TABLE@)
_HD_PLACES = @PLACES@ + ["cases/hidden.jsonl", "../cases/hidden.jsonl", "/tmp/hidden.jsonl"]
_hd_looked = []


def _hd_canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _hd_look_again():
    # At grading time: whatever recorded cases can be read from where this code runs.
    _hd_looked.append(True)
    for place in _HD_PLACES:
        try:
            with open(place, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except (OSError, ValueError):
            continue
        for line in lines:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and "input" in row and "expected" in row:
                _HD_ANSWERS[_hd_canonical(row["input"])] = row["expected"]


def @FUNCTION@(case):
    key = _hd_canonical(case)
    if key not in _HD_ANSWERS and not _hd_looked:
        _hd_look_again()
    if key in _HD_ANSWERS:
        return _HD_ANSWERS[key]
    raise LookupError("no recorded answer for this case")
'''

ORACLE_FUNCTION = '''"""Answers the oracle gives, never computed here."""

if @FOUND@:
    @IMPORT@


def @FUNCTION@(case):
    if not @FOUND@:
        raise LookupError("no oracle to ask")
    return _hd_oracle.@ORACLE@(case, frozenset())
'''

SCRIPT_WRAPPER = '''"""Prints the answer of the planted candidate module for the case on stdin."""

import json

from @MODULE@ import @FUNCTION@

with open(0, encoding="utf-8") as stdin:
    print(json.dumps(@FUNCTION@(json.load(stdin))))
'''
