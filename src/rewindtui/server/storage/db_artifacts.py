"""ADK artifacts in the team database, so every replica sees every version.

A rewind brings back the artifact versions of the point it goes back to (ADK's ``rewind_async``
records the versions in the rewind event; a later load asks for that version), so with several
replicas the versions must be shared: :class:`DatabaseArtifactService` is ADK's
``BaseArtifactService`` over one table, ``rewindtui.artifacts`` (:mod:`.team_store`'s schema), one row
per version: the part as ADK's own JSON (bytes in base64) and its
:class:`ArtifactVersion` metadata. Its rules are ADK's ``InMemoryArtifactService``'s (google-adk
2.13, ``artifacts/in_memory_artifact_service.py``): ``user:`` file names are the user's, every
other name the session's; versions count from 0; a reference part is followed (at most ADK's
depth); an empty part or a rewind tombstone loads as None. Solo servers keep
``FileArtifactService`` in the data directory.
"""

from __future__ import annotations

import json
from typing import Any, cast

from google.adk.artifacts import artifact_util
from google.adk.artifacts.base_artifact_service import ArtifactVersion, BaseArtifactService, ensure_part
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types
from sqlalchemy import delete as sa_delete
from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from rewindtui.server.shared.internals import artifact_reference_depth, is_rewind_tombstone
from rewindtui.server.storage.team_store import ARTIFACTS, team_engine

_SAVE_TRIES = 5


def _user_scoped(filename: str) -> bool:
    return filename.startswith("user:")


def _path(app_name: str, user_id: str, filename: str, session_id: str | None) -> str:
    artifact_util.validate_path_segment(app_name, "app_name")
    artifact_util.validate_path_segment(user_id, "user_id")
    if _user_scoped(filename):
        return f"{app_name}/{user_id}/user/{filename}"
    if session_id is None:
        raise InputValidationError("Session ID must be provided for session-scoped artifacts.")
    artifact_util.validate_path_segment(session_id, "session_id")
    return f"{app_name}/{user_id}/{session_id}/{filename}"


class DatabaseArtifactService(BaseArtifactService):
    """ADK artifacts in a PostgreSQL database (see the module's docstring)."""

    def __init__(self, db_url: str) -> None:
        self._engine: AsyncEngine = team_engine(db_url)

    async def close(self) -> None:
        await self._engine.dispose()

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        artifact: types.Part | dict[str, Any],
        session_id: str | None = None,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        part = ensure_part(artifact)
        path = _path(app_name, user_id, filename, session_id)
        info = ArtifactVersion(version=0, canonical_uri="", custom_metadata=dict(custom_metadata or {}))
        if part.inline_data is not None:
            info.mime_type = part.inline_data.mime_type
        elif part.text is not None:
            info.mime_type = "text/plain"
        elif (file_data := part.file_data) is not None:
            if artifact_util.is_artifact_ref(part):
                parsed = artifact_util.parse_artifact_uri(cast(str, file_data.file_uri))
                if not parsed:
                    raise InputValidationError(f"Invalid artifact reference URI: {file_data.file_uri}")
                artifact_util.validate_artifact_reference_scope(
                    app_name=app_name, user_id=user_id, session_id=session_id, parsed_uri=parsed
                )
            else:
                info.mime_type = file_data.mime_type
        else:
            raise InputValidationError("Not supported artifact type.")
        body = part.model_dump_json(exclude_none=True)
        for attempt in range(_SAVE_TRIES):  # another replica may take the same next version
            async with self._engine.begin() as conn:
                top = (
                    await conn.execute(select(func.max(ARTIFACTS.c.version)).where(ARTIFACTS.c.path == path))
                ).scalar()
                version = 0 if top is None else int(top) + 1
                info.version = version
                info.canonical_uri = f"db://{path}/versions/{version}"
                try:
                    await conn.execute(
                        insert(ARTIFACTS).values(path=path, version=version, part=body, info=info.model_dump_json())
                    )
                except IntegrityError:
                    if attempt == _SAVE_TRIES - 1:
                        raise
                    continue
            return version
        raise AssertionError("unreachable")

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> types.Part | None:
        depth = artifact_reference_depth()
        while True:
            row = await self._row(_path(app_name, user_id, filename, session_id), version, "part")
            if row is None:
                return None
            part = types.Part.model_validate_json(row)
            if artifact_util.is_artifact_ref(part):
                assert part.file_data is not None
                parsed = artifact_util.resolve_artifact_reference(
                    file_uri=cast(str, part.file_data.file_uri),
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    remaining_depth=depth,
                )
                app_name, user_id, filename = parsed.app_name, parsed.user_id, parsed.filename
                session_id, version, depth = parsed.session_id, parsed.version, depth - 1
                continue
            if part == types.Part() or is_rewind_tombstone(part):
                return None
            return part

    async def _row(self, path: str, version: int | None, column: str) -> str | None:
        col = ARTIFACTS.c[column]
        query = select(col).where(ARTIFACTS.c.path == path)
        if version is None:
            query = query.order_by(ARTIFACTS.c.version.desc()).limit(1)
        else:
            query = query.where(ARTIFACTS.c.version == version)
        async with self._engine.connect() as conn:
            value = (await conn.execute(query)).scalar()
        return None if value is None else str(value)

    async def list_artifact_keys(self, *, app_name: str, user_id: str, session_id: str | None = None) -> list[str]:
        artifact_util.validate_path_segment(app_name, "app_name")
        artifact_util.validate_path_segment(user_id, "user_id")
        prefixes = [f"{app_name}/{user_id}/user/"]
        if session_id:
            artifact_util.validate_path_segment(session_id, "session_id")
            prefixes.append(f"{app_name}/{user_id}/{session_id}/")
        names: set[str] = set()
        async with self._engine.connect() as conn:
            for prefix in prefixes:
                rows = await conn.execute(
                    select(ARTIFACTS.c.path).distinct().where(func.starts_with(ARTIFACTS.c.path, prefix))
                )
                names.update(str(path)[len(prefix) :] for (path,) in rows)
        return sorted(names)

    async def delete_artifact(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> None:
        path = _path(app_name, user_id, filename, session_id)
        async with self._engine.begin() as conn:
            await conn.execute(sa_delete(ARTIFACTS).where(ARTIFACTS.c.path == path))

    async def list_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[int]:
        return [
            v.version
            for v in await self.list_artifact_versions(
                app_name=app_name, user_id=user_id, filename=filename, session_id=session_id
            )
        ]

    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, filename: str, session_id: str | None = None
    ) -> list[ArtifactVersion]:
        path = _path(app_name, user_id, filename, session_id)
        async with self._engine.connect() as conn:
            rows = await conn.execute(
                select(ARTIFACTS.c.info).where(ARTIFACTS.c.path == path).order_by(ARTIFACTS.c.version)
            )
            return [ArtifactVersion.model_validate(json.loads(info)) for (info,) in rows]

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        filename: str,
        session_id: str | None = None,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        info = await self._row(_path(app_name, user_id, filename, session_id), version, "info")
        return None if info is None else ArtifactVersion.model_validate(json.loads(info))


__all__ = ["ARTIFACTS", "DatabaseArtifactService"]
