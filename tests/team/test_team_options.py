"""Where a team server's database URL comes from (flag > REWINDTUI_DATABASE_URL > config file) and
what is refused, in one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewindtui.config.settings import load_settings
from rewindtui.server.http.options import (
    DATABASE_URL_ENV,
    ServerOptions,
    database_url_problem,
    normalized_database_url,
)
from rewindtui.server.process.serve import config_database_url, main


def test_plain_postgresql_urls_get_the_asyncpg_driver() -> None:
    assert normalized_database_url("postgresql://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert normalized_database_url("postgres://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert normalized_database_url(None) is None
    assert database_url_problem("postgresql+asyncpg://u@h/db") is None


def test_a_url_of_another_database_is_refused_in_one_sentence() -> None:
    problem = database_url_problem("sqlite:///x.db")
    assert problem is not None and "PostgreSQL" in problem and "--data-dir" in problem and "\n" not in problem


def test_the_environment_gives_the_url() -> None:
    options = ServerOptions.from_env({DATABASE_URL_ENV: "postgresql://u@/d?host=/s"})
    assert options.database_url == "postgresql+asyncpg://u@/d?host=/s"
    assert ServerOptions.from_env({}).database_url is None


def test_the_config_files_server_table_gives_the_url_and_the_app_accepts_the_table(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[server]\ndatabase_url = "postgresql://team@db/rt"\n')
    assert config_database_url({"REWINDTUI_CONFIG": str(config)}) == "postgresql+asyncpg://team@db/rt"
    load_settings(env={"REWINDTUI_CONFIG": str(config)})  # the app does not refuse [server]
    config.write_text("[server]\ndatabase_url = 3\n")
    with pytest.raises(ValueError, match="server.database_url"):
        config_database_url({"REWINDTUI_CONFIG": str(config)})
    assert config_database_url({"REWINDTUI_CONFIG": str(tmp_path / "none.toml")}) is None


def test_serve_refuses_a_sqlite_url_before_starting(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--data-dir", str(tmp_path / "d"), "--database-url", "sqlite:///x.db"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rewindtui serve: --database-url takes a PostgreSQL URL") and err.count("\n") == 1
