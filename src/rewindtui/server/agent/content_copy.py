"""ADK's request copy of a content (``_contents._copy_content_for_request``), made the same way
without pydantic's generic copy machinery.

ADK hands every model request shallow copies of the session's contents: ``content.model_copy()``,
each part ``part.model_copy()``, and the new parts list set on the copy (``new_content.parts =
new_parts``, which pydantic records in the copy's fields set); a function call's or response's
``adk-`` id is stripped on a copy of it. At 10,000 turns that is 20,000 contents a turn, about a
third of its CPU, most of it in ``model_copy``'s and ``copy.copy``'s generic dispatch.

:func:`copier` answers a function that makes exactly those objects -- the same class, a copy of
``__dict__`` (so nested payloads shared, as ADK shares them), a copy of the fields set with
``parts`` added when the parts were replaced, ``__pydantic_extra__`` and ``__pydantic_private__``
as ``model_copy`` leaves them (``None`` for these models) -- for contents whose parts carry no
function call or response and no extra or private values; anything else is ADK's own function.
``tests/server/test_content_copy.py`` compares the two on random contents.
"""

from __future__ import annotations

import operator
import sys
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from google.genai import types

_set = object.__setattr__
_refs = sys.getrefcount
_is = operator.is_
_weakrefs = weakref.getweakrefcount


def copier(adk_copy: Callable[..., types.Content]) -> Callable[..., types.Content]:
    """A drop-in for ADK's ``_copy_content_for_request(content, *, strip_client_function_call_ids)``."""

    def copy(content: types.Content, *, strip_client_function_call_ids: bool = True) -> types.Content:
        if content.__pydantic_extra__ is not None or getattr(content, "__pydantic_private__", None) is not None:
            return adk_copy(content, strip_client_function_call_ids=strip_client_function_call_ids)
        parts = content.parts
        new_parts = None
        if parts:
            new_parts = []
            for part in parts:
                if (
                    part.function_call is not None
                    or part.function_response is not None
                    or part.__pydantic_extra__ is not None
                    or getattr(part, "__pydantic_private__", None) is not None
                ):
                    return adk_copy(content, strip_client_function_call_ids=strip_client_function_call_ids)
                new_parts.append(_shallow(part, part.__pydantic_fields_set__.copy()))
        fields = content.__pydantic_fields_set__.copy()
        new = _shallow(content, fields)
        if new_parts is not None:  # ADK's ``new_content.parts = new_parts`` (pydantic's plain setattr)
            new.__dict__["parts"] = new_parts
            fields.add("parts")
        return new

    copy.__wrapped__ = adk_copy  # type: ignore[attr-defined]
    return copy


def _shallow(model: Any, fields: set[str]) -> Any:
    """``BaseModel.__copy__`` for a model with no extra and no private values."""
    cls: Any = type(model)
    new = cls.__new__(cls)
    _set(new, "__dict__", model.__dict__.copy())
    _set(new, "__pydantic_extra__", None)
    _set(new, "__pydantic_fields_set__", fields)
    _set(new, "__pydantic_private__", None)
    return new


def hand_out(
    handed: Sequence[types.Content], sources: Sequence[types.Content], copy: Callable[..., types.Content], strip: bool
) -> list[types.Content]:
    """Copies of ``sources`` for a request, reusing ``handed[i]`` (the copy of ``sources[i]`` handed
    to an earlier request) where nothing else holds it and it is still what a fresh copy would be.

    A fresh copy is an object nobody else holds, equal in every field to the source, sharing its
    nested payloads. A copy handed out before is the same once the request that got it is gone,
    unless something changed it. So it is reused only when its reference count (CPython's) shows
    that only ``handed`` holds it (and its parts list, each part, their ``__dict__``s and fields
    sets likewise), no weak reference to it or a part is alive, and its class, fields, fields set,
    parts and each part's fields are the very objects a fresh copy would have. Anything else -- a
    request still holding it, a changed part, a source :func:`copier` would hand to ADK's own
    function -- gets a fresh copy, and so does everything on an interpreter whose reference counts
    do not behave as this expects (checked once, at import: :func:`_probe`).
    """
    out: list[types.Content] = []
    n = len(handed) if _REFCOUNTS_AS_EXPECTED else 0
    for i, source in enumerate(sources):
        if i < n and _refs(handed[i]) == 2 and _unchanged(handed[i], source):
            out.append(handed[i])
        else:
            out.append(copy(source, strip_client_function_call_ids=strip))
    return out


def _unchanged(content: Any, source: Any) -> bool:
    """``content`` (held by its list alone) is what a fresh copy of ``source`` would be; see above."""
    if (
        type(content) is not type(source)
        or _refs(content.__dict__) != 2
        or _refs(content.__pydantic_fields_set__) != 2
        or _weakrefs(content)
        or content.__pydantic_extra__ is not None
        or content.__pydantic_private__ is not None
        or source.__pydantic_extra__ is not None
        or source.__pydantic_private__ is not None
    ):
        return False
    mine, theirs = content.__dict__, source.__dict__
    if len(mine) != len(theirs):
        return False
    for (name, value), (source_name, source_value) in zip(mine.items(), theirs.items(), strict=True):
        if name is not source_name or (value is not source_value and name != "parts"):
            return False
    fields, source_fields = content.__pydantic_fields_set__, source.__pydantic_fields_set__
    parts, source_parts = mine["parts"], theirs["parts"]
    if not source_parts:
        return parts is source_parts and fields == source_fields
    if fields != (source_fields if "parts" in source_fields else source_fields | {"parts"}):
        return False
    if type(parts) is not list or _refs(parts) != 3 or len(parts) != len(source_parts):
        return False
    for j in range(len(parts)):
        part, source_part = parts[j], source_parts[j]
        if (
            type(part) is not type(source_part)
            or _refs(part) != 3  # ``parts``, ``part``, the argument
            or _weakrefs(part)
            or source_part.function_call is not None
            or source_part.function_response is not None
            or source_part.__pydantic_extra__ is not None
            or source_part.__pydantic_private__ is not None
            or part.__pydantic_extra__ is not None
            or part.__pydantic_private__ is not None
            or _refs(part.__pydantic_fields_set__) != 2
            or part.__pydantic_fields_set__ != source_part.__pydantic_fields_set__
            or _refs(part.__dict__) != 2
        ):
            return False
        mine, theirs = part.__dict__, source_part.__dict__
        if (
            len(mine) != len(theirs)
            or not all(map(_is, mine, theirs))
            or not all(map(_is, mine.values(), theirs.values()))
        ):
            return False
    return True


def _probe() -> bool:
    """Whether this interpreter counts references as :func:`hand_out` expects (CPython's rules; an
    interpreter that borrows references could count fewer and so miss a holder): a copy nothing
    else holds is handed out again, one held (strongly or weakly, or by its part) is not. Else
    :func:`hand_out` always copies afresh."""
    source = types.Content(role="user", parts=[types.Part(text="probe")])
    fresh = copier(lambda c, **_: c)

    def copy(content: types.Content, *, strip_client_function_call_ids: bool = True) -> types.Content:
        return fresh(content)

    handed = [copy(source)]
    if hand_out(handed, [source], copy, True)[0] is not handed[0]:
        return False
    held = handed[0]
    if hand_out(handed, [source], copy, True)[0] is held:
        return False
    part = held.parts[0] if held.parts else None
    del held
    if hand_out(handed, [source], copy, True)[0] is handed[0]:
        return False
    del part
    weak = weakref.ref(handed[0])
    return hand_out(handed, [source], copy, True)[0] is not weak()


_REFCOUNTS_AS_EXPECTED = True  # while the probe runs
_REFCOUNTS_AS_EXPECTED = sys.implementation.name == "cpython" and _probe()
