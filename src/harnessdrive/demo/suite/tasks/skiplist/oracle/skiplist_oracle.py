"""The reference skiplist: which files of a tree a list of skip patterns skips.

Rules, each of which can be switched off (``off``) to tag cases:

- ``comments``: ``;`` starts a comment that runs to the end of the line (the README says ``#``);
- ``braces``: ``{a,b}`` in a pattern matches either alternative (undocumented);
- ``nocase``: matching ignores letter case (undocumented).

Documented: surrounding blanks are ignored; ``*`` matches any run of characters but ``/``,
``?`` one such character; a pattern with a ``/`` inside is matched against the whole path,
one without against the file's name alone; a trailing ``/`` matches every file under a
directory of that name; ``!`` re-includes; the last pattern that matches decides.
"""

import re

RULES = ("comments", "braces", "nocase")


def _alternatives(pattern, braces):
    if not braces:
        return [pattern]
    match = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    found = []
    for choice in match.group(1).split(","):
        found.extend(_alternatives(head + choice + tail, braces))
    return found


def _regex(glob):
    out = []
    for char in glob:
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(char))
    return "".join(out)


def _compile(line, off):
    if "comments" not in off:
        line = line.split(";", 1)[0]
    line = line.strip()
    if not line:
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    directory = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    flags = re.IGNORECASE if "nocase" not in off else 0
    body = "|".join(_regex(alt) for alt in _alternatives(line, "braces" not in off))
    if directory:
        regex = f"^(?:.*/)?(?:{body})/.*$" if not anchored else f"^(?:{body})/.*$"
    elif anchored:
        regex = f"^(?:{body})$"
    else:
        regex = f"^(?:.*/)?(?:{body})$"
    return negate, re.compile(regex, flags)


def answer(case, off=frozenset()):
    patterns = [p for p in (_compile(line, off) for line in case["patterns"]) if p is not None]
    skipped = []
    for path in case["files"]:
        decided = False
        for negate, regex in patterns:
            if regex.match(path):
                decided = not negate
        if decided:
            skipped.append(path)
    return sorted(skipped)
