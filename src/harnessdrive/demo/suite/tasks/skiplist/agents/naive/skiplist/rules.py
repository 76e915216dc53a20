"""Which files a skip list skips: fnmatch on each file's name."""

import fnmatch


def skipped(case):
    names = [line.strip() for line in case["patterns"] if line.strip()]
    return sorted(
        path
        for path in case["files"]
        if any(fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], name) for name in names)
    )
