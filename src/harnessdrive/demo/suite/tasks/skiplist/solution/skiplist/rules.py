"""Which files a skip list skips, as the reference tool decides."""

import re


def _expand(pattern):
    match = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [alt for choice in match.group(1).split(",") for alt in _expand(head + choice + tail)]


def _body(glob):
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in glob)


def _rule(line):
    line = line.split(";", 1)[0].strip()
    negate = line.startswith("!")
    line = line[1:] if negate else line
    directory = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    body = "|".join(_body(alt) for alt in _expand(line))
    lead = "" if "/" in line else "(?:.*/)?"
    tail = "/.*" if directory else ""
    return negate, re.compile(f"^{lead}(?:{body}){tail}$", re.IGNORECASE)


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
