"""``rewindtui agents add | list | show | remove`` and ``--agent NAME``: saved agents in the config
file, their auth profile's credentials sent to their own origin only."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "a2a_servers"))

from binding_servers import Recorder, card_json_10, card_only_app

from asgi_thread import ServeInThread
from clirun import isolate, runner
from rewindtui.config.saved_agents import load_agents, profile_flags, resolve_flags
from rewindtui.config.values import SettingsError

HEAD = """# my settings
theme = "textual-dark"   # kept

[auth_profiles.prod]
bearer_env = "PROD_TOKEN"
origins = ["http://127.0.0.1:1"]

[headers]
X-Team = "a"
"""


def test_add_list_show_remove_keep_the_rest_of_the_file(tmp_path, monkeypatch, capsys):
    config = isolate(tmp_path, monkeypatch)
    config.write_text(HEAD)
    run = runner(capsys)
    assert (
        run(
            "agents", "add", "prod", "--url", "http://127.0.0.1:1/a2a/", "--binding", "grpc", "--auth-profile", "prod"
        ).rc
        == 0
    )
    assert run("agents", "add", "dev", "--url", "http://127.0.0.1:2/").rc == 0
    assert run("agents", "add", "dev", "--url", "http://127.0.0.1:3/").rc == 1  # exists: --replace
    assert run("agents", "add", "dev", "--url", "http://127.0.0.1:3/", "--replace").rc == 0
    assert run("agents", "add", "x", "--url", "http://h/", "--auth-profile", "nope").rc == 1
    assert run("agents", "add", "a/b", "--url", "http://h/").rc == 1
    listed = run("agents", "list", "--json").records()
    assert listed == [
        {"name": "prod", "url": "http://127.0.0.1:1/a2a/", "binding": "GRPC", "auth_profile": "prod"},
        {"name": "dev", "url": "http://127.0.0.1:3/"},
    ]
    shown = run("agents", "show", "prod", "--json").records()[0]
    assert shown["auth"] == {"name": "prod", "bearer_env": "PROD_TOKEN", "origins": ["http://127.0.0.1:1"]}
    assert run("agents", "remove", "prod").rc == 0
    assert list(load_agents(config)) == ["dev"]
    text = config.read_text()
    assert text.startswith(HEAD) and "prod" not in text.split("[headers]")[1]


def test_a_profile_goes_to_its_origins_only(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(HEAD + '\n[agents.beside]\nurl = "http://127.0.0.1:5/"\nauth_profile = "prod"\n')
    assert profile_flags(config, "prod", "http://127.0.0.1:1/other/path") == {"bearer_env": "PROD_TOKEN"}
    assert profile_flags(config, "prod", "http://127.0.0.1:5/x") == {"bearer_env": "PROD_TOKEN"}  # a saved agent of it
    with pytest.raises(SettingsError, match="may not be sent to http://127.0.0.1:9"):
        profile_flags(config, "prod", "http://127.0.0.1:9/")
    with pytest.raises(SettingsError, match="no auth profile 'nah'"):
        profile_flags(config, "nah", "http://127.0.0.1:1/")


def test_ns_name_stays_a_kagent_agent(tmp_path):
    flags = {"agent": "kagent/helper", "kagent": "http://h:8083"}
    assert resolve_flags(flags) is flags
    with pytest.raises(SettingsError, match="not both"):
        resolve_flags({"agent": "prod", "url": "http://h/"})


@pytest.mark.slow
def test_agent_name_connects_with_its_profile(tmp_path, monkeypatch, capsys):
    """The saved agent's URL is used and its profile's token reaches its origin (a recording
    server), and the token is never printed."""
    config = isolate(tmp_path, monkeypatch)
    monkeypatch.setenv("PROD_TOKEN", "s3cret-prod-token")
    recorder = Recorder()
    served = ServeInThread(factory=lambda url: card_only_app(card_json_10(url + "/"), recorder)).start()
    try:
        config.write_text(f'[auth_profiles.prod]\nbearer_env = "PROD_TOKEN"\norigins = ["{served.url}"]\n')
        run = runner(capsys)
        assert run("agents", "add", "prod", "--url", served.url + "/", "--auth-profile", "prod").rc == 0
        shown = run("card", "--agent", "prod", "--json")
    finally:
        served.stop()
    assert shown.rc == 0, shown.err
    assert shown.records()[0]["url"].startswith(served.url)
    assert [s.headers.get("authorization") for s in recorder.seen][:1] == ["Bearer s3cret-prod-token"]
    assert "s3cret-prod-token" not in shown.out + shown.err
