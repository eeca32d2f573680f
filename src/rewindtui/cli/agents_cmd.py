"""``rewindtui agents add | list | remove | show``: named agents (URL, binding, dialect, auth
profile) kept in the config file (:mod:`rewindtui.config.saved_agents`); ``--agent NAME`` then
uses one in the app, the headless commands and the MCP tools."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from rewindtui.cli.output import Output


def add_parser(sub: Any, connection_options: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "agents",
        help="saved agents: add, list, remove, show (then --agent NAME anywhere)",
        description=(
            "Keep named agents in the config file ([agents.NAME]: url, binding, dialect, auth_profile). "
            "--agent NAME then stands for them in the app, the headless commands and the MCP tools. An auth "
            "profile is an [auth_profiles.NAME] table of the config file (the keys of [auth], and origins)."
        ),
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="save an agent")
    add.add_argument("name", metavar="NAME")
    add.add_argument("--url", dest="agent_url", metavar="URL", required=True, help="its A2A endpoint")
    add.add_argument("--binding", dest="agent_binding", metavar="NAME", help="auto, jsonrpc, http+json or grpc")
    add.add_argument("--dialect", dest="agent_dialect", metavar="VERSION", help="0.3 or 1.0 (default: from its card)")
    add.add_argument("--auth-profile", metavar="NAME", help="an [auth_profiles.NAME] table of the config file")
    add.add_argument("--replace", action="store_true", help="replace a saved agent of that name")
    listed = actions.add_parser("list", help="list the saved agents")
    show = actions.add_parser("show", help="one saved agent and its auth profile (never a secret)")
    show.add_argument("name", metavar="NAME")
    remove = actions.add_parser("remove", help="forget a saved agent")
    remove.add_argument("name", metavar="NAME")
    for a in (add, listed, show, remove):
        a.add_argument(
            "--config",
            default=argparse.SUPPRESS,
            metavar="PATH",
            help="config file (default: config.toml in the user config dir)",
        )
        a.add_argument("--json", action="store_true", help="one JSON object per line")


def main(settings: Any, args: argparse.Namespace) -> int:
    from rewindtui.config.saved_agents import (
        SavedAgent,
        add_agent,
        check_name,
        config_path,
        load_agents,
        load_profiles,
        remove_agent,
    )
    from rewindtui.config.values import check_binding, check_dialect, check_url
    from rewindtui.output.render_text import json_line

    out = Output(args.json)
    path = settings.config_file or config_path(args)
    if args.action == "add":
        binding = check_binding(args.agent_binding, "--binding") if args.agent_binding else None
        agent = SavedAgent(
            check_name(args.name),
            check_url(args.agent_url, "--url"),
            None if binding in (None, "auto") else binding,
            check_dialect(args.agent_dialect, "--dialect").value if args.agent_dialect else None,
            check_name(args.auth_profile, "auth profile") if args.auth_profile else None,
        )
        add_agent(path, agent, replace=args.replace)
        out.line(
            json_line({"saved": agent.record(), "config": str(path)})
            if out.as_json
            else f"saved agent {agent.name} in {path}"
        )
        return 0
    if args.action == "remove":
        remove_agent(path, args.name)
        out.line(json_line({"removed": args.name}) if out.as_json else f"removed agent {args.name} from {path}")
        return 0
    agents = load_agents(path)
    if args.action == "list":
        for agent in agents.values():
            out.line(json_line(agent.record()) if out.as_json else _line(agent))
        if not agents and not out.as_json:
            out.line(f"no saved agents in {path}")
        return 0
    found = agents.get(args.name)
    if found is None:
        from rewindtui.cli.output import CommandFailed

        raise CommandFailed(f"no saved agent {args.name!r} in {path}")
    agent = found
    profile = load_profiles(path).get(agent.auth_profile or "") if agent.auth_profile else None
    record = {**agent.record(), "auth": profile.record() if profile else None}
    if out.as_json:
        out.line(json_line(record))
    else:
        out.line(_line(agent))
        if profile is not None:
            keys = ", ".join(f"{k} = {v}" for k, v in profile.keys.items())
            out.line(f"  auth profile {profile.name}: {keys}; sent to {', '.join(profile.origins) or agent.url}")
    return 0


def _line(agent: Any) -> str:
    extras = [f"{k} {getattr(agent, k)}" for k in ("binding", "dialect", "auth_profile") if getattr(agent, k)]
    return f"{agent.name}  {agent.url}" + (f"  ({', '.join(extras)})" if extras else "")
