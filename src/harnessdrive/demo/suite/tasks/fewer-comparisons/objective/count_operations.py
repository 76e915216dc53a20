"""Counts the key operations (== and hash) that dupes.finder.repeated performs on fixed keys."""

import json
import sys

sys.path.insert(0, ".")

from dupes.finder import repeated  # noqa: E402

operations = [0]


class Key:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        operations[0] += 1
        return isinstance(other, Key) and self.value == other.value

    def __hash__(self):
        operations[0] += 1
        return hash(self.value)


def fixed_values(count, seed=2026):
    # A linear congruential sequence: the same keys on every machine and Python version.
    values, state = [], seed
    for _ in range(count):
        state = (state * 1103515245 + 12345) % 2**31
        values.append((state >> 8) % 120)
    return values


values = fixed_values(300)
keys = [Key(value) for value in values]
found = [key.value for key in repeated(keys)]
print(json.dumps({"value": operations[0], "repeats": len(found)}))
