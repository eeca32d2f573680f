"""Who is asking: the user id of a request (REST and A2A alike).

The ``X-User-Id`` header wins, then the ``user_id`` query parameter (kagent's
controller accepts both); without either the user is ``"local"``. Sessions and
tasks belong to their user: another user's session or task is a 404.
"""

from __future__ import annotations

import re

from starlette.requests import Request

DEFAULT_USER = "local"
USER_HEADER = "X-User-Id"
USER_QUERY = "user_id"
_USER_RE = re.compile(r"^[^\x00-\x1f\x7f/\\]{1,200}$")


class InvalidUser(ValueError):
    pass


def resolve_user(request: Request) -> str:
    """The request's user id; raises :class:`InvalidUser` for an unusable one."""
    value = request.headers.get(USER_HEADER)
    if value is None:
        value = request.query_params.get(USER_QUERY)
    return user_from(value)


def user_from(value: str | None) -> str:
    """A user id as given (a header's value; None: not given); :class:`InvalidUser` if unusable."""
    if value is None:
        return DEFAULT_USER
    value = value.strip()
    if not _USER_RE.match(value):
        raise InvalidUser("invalid user id: use 1-200 printable characters, no slashes")
    return value
