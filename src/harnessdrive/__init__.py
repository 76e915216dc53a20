"""harnessdrive: test-drive AI coding-agent harnesses on the same tasks."""

__version__ = "0.1.0"
