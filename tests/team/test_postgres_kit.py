"""The test kit's PostgreSQL (tests/kit/postgres.py): a real server, a fresh database per test."""

from __future__ import annotations

import asyncio

import pytest

from kit.postgres import OPT_OUT_ENV, new_database


async def _tables_and_version(url: str) -> tuple[int, str]:
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            count = (
                await conn.execute(text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"))
            ).scalar_one()
            version = (await conn.execute(text("SHOW server_version"))).scalar_one()
            await conn.execute(text("CREATE TABLE mark (x int)"))
            await conn.commit()
    finally:
        await engine.dispose()
    return int(count), str(version)


def test_each_test_gets_a_fresh_empty_database_on_a_real_postgresql(pg_url: str) -> None:
    assert pg_url.startswith("postgresql+asyncpg://")
    count, version = asyncio.run(_tables_and_version(pg_url))
    assert count == 0
    assert int(version.split(".")[0]) >= 14
    # a second database on the same server is empty again: the table made above is not in it
    assert asyncio.run(_tables_and_version(new_database()))[0] == 0


def test_the_opt_out_variable_skips_and_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(OPT_OUT_ENV, "1")
    with pytest.raises(pytest.skip.Exception, match=OPT_OUT_ENV):
        new_database()
