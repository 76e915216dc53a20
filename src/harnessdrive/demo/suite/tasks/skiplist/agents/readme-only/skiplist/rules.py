"""Which files a skip list skips, following the README."""

import re


def _body(glob):
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in glob)


def _rule(line):
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    line = line[1:] if negate else line
    directory = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    lead = "" if "/" in line else "(?:.*/)?"
    tail = "/.*" if directory else ""
    return negate, re.compile(f"^{lead}(?:{_body(line)}){tail}$")


def skipped(case):
    rules = [r for r in map(_rule, case["patterns"]) if r is not None]
    out = []
    for path in case["files"]:
        skip = False
        for negate, regex in rules:
            if regex.match(path):
                skip = not negate
        if skip:
            out.append(path)
    return sorted(out)
