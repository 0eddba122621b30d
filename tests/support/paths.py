"""Where the repository is, for tests that read its files or run commands from its top."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
