"""``card``: the agent card, read even when this client cannot use the agent."""

from __future__ import annotations

import argparse
from typing import Any

from rewindtui.cli.output import Output
from rewindtui.client.a2a_client import ClientError


async def cmd_card(conn: Any, args: argparse.Namespace, out: Output) -> int:
    from rewindtui.config.connection import describe_connect_error
    from rewindtui.output.render_text import card_record, format_card, json_line

    client = conn.client
    try:
        card, url, problem = await card_of(client)
    except ClientError as exc:
        raise describe_connect_error(exc, conn.settings, client.url, embedded=conn.embedded) from exc
    from rewindtui.output.card_extras import card_extras, load_keys

    settings = getattr(conn, "settings", None)
    keys = load_keys(getattr(args, "card_keys", None) or getattr(settings, "card_keys", None))
    issuers = tuple(getattr(settings, "card_issuers", ()) or ())
    extras = await card_extras(client, card, url, extended=getattr(args, "extended", False), keys=keys, issuers=issuers)
    kagent = getattr(conn, "kagent", None)  # which kagent API, and what works there (kagent1_profile.Detection)
    verdict = None
    if getattr(args, "validate", False):
        from rewindtui.output.card_validation import validate

        verdict = validate(card)
    if out.as_json:
        checked = {"validation": verdict.record()} if verdict is not None else {}
        found = kagent.record() if kagent else {}
        out.line(
            json_line({**card_record(card, url, client.capabilities, problem), **extras.record(), **found, **checked})
        )
    else:
        lines = format_card(card, url, client.capabilities, problem)
        last = [lines.pop()] if problem else []  # "rewindtui cannot use this agent" stays last
        found_lines = kagent.lines() if kagent else []
        for text in [*lines, *extras.lines(url), *found_lines, *(verdict.lines() if verdict else []), *last]:
            out.line(text)
    return 1 if verdict is not None and not verdict.ok else 0


async def card_of(client: Any) -> tuple[dict[str, Any], str, str]:
    """The card (read even when this client cannot use the agent), where it was read, and why
    the agent cannot be used ("" when it can)."""
    if client.capabilities is not None:
        return client.capabilities.card, client.url, ""
    card = await client.fetch_card()
    try:
        await client.connect()
    except ClientError as exc:
        return card, client.url, str(exc)
    return card, client.url, ""
