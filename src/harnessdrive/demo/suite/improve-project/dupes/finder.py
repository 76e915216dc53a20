"""Repeated keys of a list."""


def repeated(keys):
    """The keys that occur more than once, each once, in the order of their second occurrence.

    Keys are compared with ``==`` and are hashable.
    """
    result = []
    for index, key in enumerate(keys):
        seen_before = any(key == earlier for earlier in keys[:index])
        if seen_before and not any(key == done for done in result):
            result.append(key)
    return result
