"""What a team server keeps besides conversations: users, their bearer tokens (hashed), the shares
of a session with another user, and (on PostgreSQL) ADK's artifacts (:mod:`.db_artifacts`).

SQLAlchemy Core over either engine: on PostgreSQL the tables sit in the store's schema
(``rewindtui``, :mod:`.store_pg`); on SQLite in the store's file (``rewindtui.db``). They have
their own schema version (:data:`TEAM_SCHEMA_VERSION`, the row of ``team_schema_version``) so
they change apart from the task store's; a database written by a newer rewindtui is refused in
one sentence, and two replicas starting at once migrate one after the other (an advisory lock).

Tokens: ``rwt_`` + 32 random bytes (URL-safe base64); only their SHA-256 is stored (a token has
256 bits of entropy, so a fast hash is enough: nothing to guess). A token names its user; a
session belongs to the user who created it (``sessions.user_id``); a share gives another user
``read`` or ``write`` on one session (kagent 1.0's shares: a link to one session, read-only or
writable).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import Column, Integer, MetaData, String, Table, Text, delete, insert, select, text
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from rewindtui.server.shared.wire import now_iso
from rewindtui.server.storage.store_pg import MIGRATE_LOCK_KEY, PG_SCHEMA, is_postgres_url, shown_url
from rewindtui.server.storage.store_schema import SchemaTooNew

#: 1: users, user_tokens, shares, cancel_requests, artifacts
TEAM_SCHEMA_VERSION = 1
TOKEN_PREFIX = "rwt_"
READ, WRITE = "read", "write"
SHARE_MODES = (READ, WRITE)

metadata = MetaData()
SCHEMA_VERSION_TABLE = Table("team_schema_version", metadata, Column("version", Integer, nullable=False))
USERS = Table(
    "users",
    metadata,
    Column("id", String, primary_key=True),
    Column("created_at", String, nullable=False),
)
TOKENS = Table(
    "user_tokens",
    metadata,
    Column("hash", String, primary_key=True),
    Column("user_id", String, nullable=False, index=True),
    Column("name", String, nullable=False),
    Column("created_at", String, nullable=False),
)
SHARES = Table(
    "shares",
    metadata,
    Column("session_id", String, primary_key=True),
    Column("user_id", String, primary_key=True),
    Column("mode", String, nullable=False),
    Column("created_at", String, nullable=False),
)
#: a cancel asked of a turn that runs on another replica (which stops it and removes the row)
CANCELS = Table(
    "cancel_requests",
    metadata,
    Column("task_id", String, primary_key=True),
    Column("user_id", String, nullable=False),
    Column("created_at", String, nullable=False),
)
ARTIFACTS = Table(
    "artifacts",
    metadata,
    Column("path", String, primary_key=True),
    Column("version", Integer, primary_key=True),
    Column("part", Text, nullable=False),
    Column("info", Text, nullable=False),
)


def team_engine(url: str) -> AsyncEngine:
    """An engine on the team tables of ``url`` (PostgreSQL: the store's schema first)."""
    if is_postgres_url(url):
        return create_async_engine(
            url, connect_args={"server_settings": {"search_path": f"{PG_SCHEMA}, public"}}, pool_pre_ping=True
        )
    return create_async_engine(url)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Share:
    session_id: str
    user_id: str
    mode: str


class UserExists(ValueError):
    """A user of that name exists already."""


class TeamStore:
    """Users, tokens and shares (see the module's docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = team_engine(url)

    async def open(self) -> None:
        """Create or migrate the tables; refuses a newer schema (:class:`SchemaTooNew`)."""
        postgres = self.engine.dialect.name == "postgresql"
        async with self.engine.connect() as conn:
            if postgres:
                await conn.execute(text(f"SELECT pg_advisory_lock({MIGRATE_LOCK_KEY})"))
                await conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {PG_SCHEMA}"))
                await conn.commit()
            try:
                await conn.run_sync(lambda sync: SCHEMA_VERSION_TABLE.create(sync, checkfirst=True))
                version = (await conn.execute(select(SCHEMA_VERSION_TABLE.c.version))).scalar()
                version = int(version or 0)
                if version > TEAM_SCHEMA_VERSION:
                    where = f"the database {shown_url(self.url)}" if postgres else "the data directory's rewindtui.db"
                    raise SchemaTooNew(
                        f"{where} holds users and shares of a newer rewindtui (schema {version}, this one knows "
                        f"{TEAM_SCHEMA_VERSION}); upgrade rewindtui"
                    )
                if version < TEAM_SCHEMA_VERSION:
                    await conn.run_sync(metadata.create_all)  # version 1: every table
                    await conn.execute(delete(SCHEMA_VERSION_TABLE))
                    await conn.execute(insert(SCHEMA_VERSION_TABLE).values(version=TEAM_SCHEMA_VERSION))
                await conn.commit()
            finally:
                if postgres:
                    await conn.execute(text(f"SELECT pg_advisory_unlock({MIGRATE_LOCK_KEY})"))
                    await conn.commit()

    async def close(self) -> None:
        await self.engine.dispose()

    # -- users and tokens --------------------------------------------------------------------
    async def add_user(self, user_id: str) -> None:
        try:
            async with self.engine.begin() as conn:
                await conn.execute(insert(USERS).values(id=user_id, created_at=now_iso()))
        except IntegrityError:
            raise UserExists(f"a user named {user_id!r} exists already") from None

    async def users(self) -> list[str]:
        async with self.engine.connect() as conn:
            return [str(r[0]) for r in await conn.execute(select(USERS.c.id).order_by(USERS.c.id))]

    async def new_token(self, user_id: str, name: str = "") -> str:
        """A new bearer token for ``user_id`` (made a user if not one yet); only its hash is kept,
        so this is the one time it is seen."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        async with self.engine.begin() as conn:
            known = (await conn.execute(select(USERS.c.id).where(USERS.c.id == user_id))).first()
            if known is None:
                await conn.execute(insert(USERS).values(id=user_id, created_at=now_iso()))
            await conn.execute(
                insert(TOKENS).values(hash=token_hash(token), user_id=user_id, name=name, created_at=now_iso())
            )
        return token

    async def revoke_tokens(self, user_id: str) -> int:
        async with self.engine.begin() as conn:
            result = await conn.execute(delete(TOKENS).where(TOKENS.c.user_id == user_id))
            return int(result.rowcount or 0)

    async def user_of(self, token: str) -> str | None:
        """The user whose token ``token`` is, or None."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(TOKENS.c.user_id).where(TOKENS.c.hash == token_hash(token)))).first()
        return None if row is None else str(row[0])

    async def has_users(self) -> bool:
        async with self.engine.connect() as conn:
            return (await conn.execute(select(TOKENS.c.hash).limit(1))).first() is not None

    async def has_user(self, user_id: str) -> bool:
        async with self.engine.connect() as conn:
            return (await conn.execute(select(USERS.c.id).where(USERS.c.id == user_id))).first() is not None

    async def session_owner(self, session_id: str) -> str | None:
        """The user whose session ``session_id`` is, from the task store's ``sessions`` table in the
        same database (:mod:`.store_schema`, :mod:`.store_pg`); None when there is no such session
        (or no store there yet)."""
        try:
            async with self.engine.connect() as conn:
                row = (
                    await conn.execute(text("SELECT user_id FROM sessions WHERE id = :id"), {"id": session_id})
                ).first()
        except DBAPIError:  # no store in this database yet: no sessions
            return None
        return None if row is None else str(row[0])

    # -- shares ------------------------------------------------------------------------------
    async def share(self, session_id: str, user_id: str, mode: str) -> None:
        if mode not in SHARE_MODES:
            raise ValueError(f"a share is {' or '.join(SHARE_MODES)}, not {mode!r}")
        async with self.engine.begin() as conn:
            await conn.execute(delete(SHARES).where(SHARES.c.session_id == session_id, SHARES.c.user_id == user_id))
            await conn.execute(
                insert(SHARES).values(session_id=session_id, user_id=user_id, mode=mode, created_at=now_iso())
            )

    async def unshare(self, session_id: str, user_id: str) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(delete(SHARES).where(SHARES.c.session_id == session_id, SHARES.c.user_id == user_id))

    async def share_of(self, session_id: str, user_id: str) -> str | None:
        """``read``, ``write`` or None: what ``user_id`` may do with another user's session."""
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(SHARES.c.mode).where(SHARES.c.session_id == session_id, SHARES.c.user_id == user_id)
                )
            ).first()
        return None if row is None else str(row[0])

    async def shares(self, session_id: str) -> list[Share]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(SHARES.c.session_id, SHARES.c.user_id, SHARES.c.mode).where(SHARES.c.session_id == session_id)
            )
            return [Share(str(a), str(b), str(c)) for a, b, c in rows]

    # -- cancels across replicas ---------------------------------------------------------------
    async def request_cancel(self, task_id: str, user_id: str) -> None:
        """Ask whichever replica runs ``task_id`` to stop it (kept until that replica has)."""
        async with self.engine.begin() as conn:
            await conn.execute(delete(CANCELS).where(CANCELS.c.task_id == task_id))
            await conn.execute(insert(CANCELS).values(task_id=task_id, user_id=user_id, created_at=now_iso()))

    async def cancels_for(self, task_ids: list[str]) -> list[str]:
        """Which of ``task_ids`` (turns running here) another replica asked to cancel."""
        if not task_ids:
            return []
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(CANCELS.c.task_id).where(CANCELS.c.task_id.in_(task_ids)))
            return [str(r[0]) for r in rows]

    async def drop_cancels(self, task_ids: list[str]) -> None:
        if task_ids:
            async with self.engine.begin() as conn:
                await conn.execute(delete(CANCELS).where(CANCELS.c.task_id.in_(task_ids)))
