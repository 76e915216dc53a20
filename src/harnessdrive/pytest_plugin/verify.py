"""The verifiers, under the name earlier cases import them by; they live in :mod:`.verifiers`."""

from harnessdrive.pytest_plugin.verifiers import *  # noqa: F403
from harnessdrive.pytest_plugin.verifiers import __all__ as __all__
