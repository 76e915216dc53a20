"""Repeated keys of a list."""


def repeated(keys):
    """The keys that occur more than once, each once, in the order of their second occurrence.

    Keys are compared with ``==`` and are hashable.
    """
    seen = set()
    reported = set()
    result = []
    for key in keys:
        if key not in seen:
            seen.add(key)
        elif key not in reported:
            reported.add(key)
            result.append(key)
    return result
