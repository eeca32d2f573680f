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

from collections.abc import Callable
from typing import Any

from google.genai import types

_set = object.__setattr__


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
