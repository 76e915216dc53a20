"""The bundled offline demo: a small project, four tasks, and scripted models for real CLIs."""

from pathlib import Path

DEMO_SUITE = Path(__file__).parent / "suite"
