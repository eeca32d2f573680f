"""Shared test configuration: snapshots live in the top-level snapshots/ folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/captures.py and helpers

#: fixtures every test can use: ``pg_url`` (a fresh PostgreSQL database, tests/kit/postgres.py);
#: the cyclic collector kept off what each module leaves alive (tests/kit/collector.py)
pytest_plugins = ["kit.postgres", "kit.collector"]


def _relocate_snapshots() -> None:
    try:
        import pytest_textual_snapshot as plugin
    except ImportError:  # pragma: no cover - the plugin is a test dependency
        return

    class TopLevelSVGExtension(plugin.SVGImageExtension):
        """snapshots/<test module>/<test>.svg instead of tests/__snapshots__/."""

        @classmethod
        def dirname(cls, *, test_location) -> str:  # type: ignore[override]
            return str(ROOT / "snapshots" / Path(test_location.filepath).stem)

    # the plugin looks this name up on each snap_compare call
    plugin.SVGImageExtension = TopLevelSVGExtension


_relocate_snapshots()


@pytest.fixture(autouse=True)
def _no_user_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing a test runs writes to the user's real data dir (the client's local sessions store
    lives there); a test that wants its own sets REWINDTUI_DATA_DIR again."""
    import rewindtui.base.dirs

    data = tmp_path_factory.mktemp("user-data")

    def user_data_dir(appname: str | None = None, *args: object, **kw: object) -> str:
        return str(data / (appname or "data"))

    monkeypatch.setattr(rewindtui.base.dirs.platformdirs, "user_data_dir", user_data_dir)


def pytest_configure(config: pytest.Config) -> None:
    # Updating snapshots for a single test id deletes the module's other snapshots with a
    # relocated folder; only allow whole modules, -k, or the whole suite.
    # Updating snapshots for part of a module (a test id, or -k, which was seen deleting two
    # snapshots of tests it deselected) deletes the module's other snapshots: whole modules only.
    if config.getoption("--snapshot-update", default=False) and (
        any("::" in arg for arg in config.args) or config.getoption("keyword", default="")
    ):
        raise pytest.UsageError(
            "--snapshot-update deletes the snapshots of deselected tests: update whole modules (no :: or -k)"
        )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject.toml): three workers more than the cores. Many tests spend part of
    their time waiting -- for a server in another process, the paced demo model, a terminal,
    Textual's Pilot waiting for the app to go idle after each key -- and a worker that waits leaves
    its core idle; the extra workers fill those gaps (docs/testing.md: on 2 cores, clean clones,
    pytest took 419 s with four workers and 399 s with five, for a little more CPU. Four workers'
    load once lost a stop pressed in one burst with Enter: the stop gave up waiting for the
    server's first frame after 2 s and sent no cancel, fixed in ``Chat.stop``)."""
    return (os.cpu_count() or 1) + 3


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadscope`` with the folders of ``schedule.ONE_UNIT`` as one unit each."""
    from schedule import folder_scope

    return folder_scope(config, log) if config.getvalue("dist") == "loadscope" else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    from lanes import mark_slow  # the fast lane's boundary, in one place
    from schedule import order  # the longest modules first (xdist runs them in this order)

    mark_slow(items)
    order(items)
