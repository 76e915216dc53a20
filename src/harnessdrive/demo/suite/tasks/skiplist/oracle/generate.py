"""Case N of the skiplist task: a small tree and a few patterns made from its names."""

import random

STEMS = {
    "realistic": ["main", "notes", "build", "Cache", "report", "data"],
    "hard": ["a", "A", "b"],
}
EXTS = {"realistic": ["py", "log", "TMP", "md", "txt"], "hard": ["x", "X", "y"]}
DIRS = {"realistic": ["src", "Docs", "out", "lib"], "hard": ["d", "D"]}


def make_case(index, seed, profile):
    rng = random.Random(f"{seed}:{profile}:{index}")
    stems, exts, dirs = STEMS[profile], EXTS[profile], DIRS[profile]
    files = set()
    for _ in range(rng.randint(2, 8)):
        name = f"{rng.choice(stems)}.{rng.choice(exts)}"
        depth = rng.choice([0, 0, 1, 1, 2])
        files.add("/".join([*(rng.choice(dirs) for _ in range(depth)), name]))
    patterns = [_pattern(rng, sorted(files), stems, exts, dirs) for _ in range(rng.randint(1, 4))]
    return {"patterns": patterns, "files": sorted(files)}


def _pattern(rng, files, stems, exts, dirs):
    path = rng.choice(files)
    name = path.rsplit("/", 1)[-1]
    stem, ext = name.rsplit(".", 1)
    kind = rng.random()
    if kind < 0.2:
        text = f"*.{ext}"
    elif kind < 0.35:
        text = f"{stem}.*"
    elif kind < 0.5 and "/" in path:
        text = path.split("/", 1)[0] + "/"
    elif kind < 0.65:
        text = f"*.{{{ext},{rng.choice(exts)}}}"
    elif kind < 0.75:
        text = path
    else:
        text = name
    if rng.random() < 0.25:
        text = text.swapcase()
    if rng.random() < 0.2:
        text = "!" + text
    if rng.random() < 0.2:
        text = f"{text} ; {rng.choice(['old', 'keep', 'x'])}"
    return text
