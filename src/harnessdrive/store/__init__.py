"""The results folder: trial folders and their ``result.json``, the index over them, the lock a run
holds, in-flight markers, atomic writes and the folder layout (``store/paths.py``)."""
