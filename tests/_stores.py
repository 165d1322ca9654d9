"""Where the suite's stores live: the one place that picks the backend for every test.

Today a SQLite file in the test's tmp_path. ``conftest.py`` builds the ``db_url`` and
``db_url_factory`` fixtures on it; tests that need a store URL outside a fixture (helpers,
subprocess arguments) call ``store_url`` directly.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["store_url"]


def store_url(path: Path | str) -> str:
    """The URL of a fresh store for ``path`` (a file in the test's tmp_path)."""
    return f"sqlite:///{path}"
