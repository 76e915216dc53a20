"""Repeated keys of a list."""


def repeated(keys):
    """The keys that occur more than once, each once, in the order of their second occurrence.

    Keys are compared with ``==`` and are hashable.
    """
    distinct = []
    result = []
    for key in keys:
        if not any(key == earlier for earlier in distinct):
            distinct.append(key)
        elif not any(key == done for done in result):
            result.append(key)
    return result
