"""Settings: flags > environment > config file, kagent shorthand, headers, per-server rewind."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewindtui.a2a.dialect import Dialect
from rewindtui.config.settings import Settings, SettingsError, load_settings, parse_header, parse_headers


@pytest.fixture
def config(tmp_path: Path):
    """Write a config file and return an environment that points at it."""

    def write(text: str, **env: str) -> dict[str, str]:
        path = tmp_path / "config.toml"
        path.write_text(text, encoding="utf-8")
        return {"REWINDTUI_CONFIG": str(path), **env}

    return write


def test_nothing_given_means_the_embedded_server(config) -> None:
    s = load_settings({}, config(""))
    assert s.embedded and s.url is None and s.api is None
    assert s.headers == {} and s.rewind_mode_for("http://x") == "auto"
    assert s.timeout == 30.0


def test_missing_default_file_is_fine(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("rewindtui.config.settings.default_config_path", lambda: tmp_path / "nope" / "config.toml")
    s = load_settings({}, {})
    assert s.embedded and s.config_file is None


def test_the_file_alone(config, tmp_path) -> None:
    env = config(
        """
url = "http://files.example/api/a2a/ns/a/"
api = "http://files.example/api"
user_id = "alice"
dialect = "1.0"
theme = "textual-light"
data_dir = "data"
model = "demo"
timeout = 5

[headers]
Authorization = "Bearer file"

[keymap]
rewind = "r"
fork = ["ctrl+f", "f"]
"""
    )
    s = load_settings({}, env)
    assert s.url == "http://files.example/api/a2a/ns/a/"
    assert s.api == "http://files.example/api"
    assert s.user_id == "alice" and s.dialect is Dialect.V10 and s.theme == "textual-light"
    assert s.data_dir == tmp_path / "data"  # relative to the file
    assert s.model == "demo" and s.timeout == 5.0
    assert s.headers == {"Authorization": "Bearer file"}
    assert s.keymap == {"rewind": "r", "fork": "ctrl+f,f"}
    assert s.config_file == tmp_path / "config.toml"
    cfg = s.server_config()
    assert (cfg.url, cfg.api, cfg.user_id, cfg.dialect, cfg.timeout) == (s.url, s.api, "alice", Dialect.V10, 5.0)
    assert cfg.headers == {"Authorization": "Bearer file"}


def test_precedence_flags_over_env_over_file(config) -> None:
    env = config(
        'user_id = "file"\ntheme = "file-theme"\nmodel = "file-model"\ndata_dir = "/file/data"\n',
        REWINDTUI_USER_ID="env",
        REWINDTUI_THEME="env-theme",
        REWINDTUI_DATA_DIR="/env/data",
    )
    s = load_settings({}, env)
    assert (s.user_id, s.theme, s.model, s.data_dir) == ("env", "env-theme", "file-model", Path("/env/data"))
    s = load_settings({"user_id": "flag", "data_dir": "/flag/data"}, env)
    assert (s.user_id, s.theme, s.data_dir) == ("flag", "env-theme", Path("/flag/data"))


def test_server_comes_whole_from_the_highest_source(config) -> None:
    env = config('url = "http://file/a2a/"\napi = "http://file/api"\n')
    assert load_settings({}, env).api == "http://file/api"
    # an env URL is not paired with the file's REST base for another server
    s = load_settings({}, {**env, "REWINDTUI_URL": "http://env/a2a/"})
    assert (s.url, s.api) == ("http://env/a2a/", None)
    s = load_settings({"url": "http://flag/a2a/"}, {**env, "REWINDTUI_API": "http://env/api"})
    assert (s.url, s.api) == ("http://flag/a2a/", None)
    s = load_settings({"api": "http://flag/api"}, {**env, "REWINDTUI_URL": "http://env/a2a/"})
    assert (s.url, s.api) == ("http://env/a2a/", "http://flag/api")  # a higher source may add the api
    # a flag URL beats a kagent controller in the file
    env = config('kagent = "http://ctl:8083"\nagent = "ns/a"\n')
    s = load_settings({"url": "http://flag/a2a/"}, env)
    assert (s.url, s.api, s.kagent) == ("http://flag/a2a/", None, None)


def test_kagent_shorthand(config) -> None:
    s = load_settings({"kagent": "http://ctl:8083/", "agent": "kagent/helper"}, config(""))
    assert s.url == "http://ctl:8083/api/a2a/kagent/helper/"
    assert s.api == "http://ctl:8083/api"
    assert s.describe_server() == "agent kagent/helper on http://ctl:8083"
    # the controller in the file, the agent on the command line; a trailing /api is tolerated
    s = load_settings({"agent": "ns/other"}, config('kagent = "http://ctl:8083/api"\nagent = "ns/a"\n'))
    assert s.url == "http://ctl:8083/api/a2a/ns/other/" and s.api == "http://ctl:8083/api"
    # kagent from the environment overrides a URL in the file
    s = load_settings({}, config('url = "http://file/a2a/"\n', REWINDTUI_KAGENT="http://e:1", REWINDTUI_AGENT="n/x"))
    assert s.url == "http://e:1/api/a2a/n/x/"


@pytest.mark.parametrize(
    "flags, message",
    [
        ({"kagent": "http://ctl:8083"}, "--kagent: needs an agent too"),
        ({"agent": "ns/a"}, "--agent: needs a kagent controller too"),
        ({"agent": "just-a-name"}, "--agent: expected NAMESPACE/NAME"),
        ({"url": "http://a/", "kagent": "http://b", "agent": "n/a"}, "not both"),
        ({"url": "localhost:8080"}, "--url: not an http(s) URL"),
        ({"rewind": "sometimes"}, "--rewind: rewind mode must be one of"),
        ({"dialect": "2.5x"}, None),
        ({"dialect": "zero"}, "--dialect: dialect must be 0.3 or 1.0"),
        ({"header": ["no-colon"]}, "--header: expected NAME: VALUE"),
        ({"header": ["Bad Name: x"]}, "--header: not a valid header name"),
    ],
)
def test_bad_flags(config, flags, message) -> None:
    if message is None:
        load_settings(flags, config(""))
        return
    with pytest.raises(SettingsError) as info:
        load_settings(flags, config(""))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_headers_parsing() -> None:
    assert parse_header("Authorization: Bearer a:b") == ("Authorization", "Bearer a:b")
    assert parse_header("X-Key=v") == ("X-Key", "v")
    assert parse_headers('{"Authorization": "Bearer j", "X-N": 3}') == {"Authorization": "Bearer j", "X-N": "3"}
    assert parse_headers("A: 1; B: two words;\nC: 3") == {"A": "1", "B": "two words", "C": "3"}
    assert parse_headers("  ") == {}
    with pytest.raises(SettingsError, match="not valid JSON"):
        parse_headers("{nope")
    with pytest.raises(SettingsError, match="line break"):
        parse_headers('{"A": "x\\ny"}')


def test_headers_merge_across_sources(config) -> None:
    env = config(
        '[headers]\nAuthorization = "Bearer file"\nX-File = "f"\n',
        REWINDTUI_HEADERS='{"authorization": "Bearer env", "X-Env": "e"}',
    )
    s = load_settings({"header": ["X-Env: flag", "X-Flag: 1"]}, env)
    assert s.headers == {"X-File": "f", "authorization": "Bearer env", "X-Env": "flag", "X-Flag": "1"}


def test_per_server_rewind_mode(config) -> None:
    env = config(
        """
[rewind]
default = "a2a"
"http://ctl:8083" = "off"
"http://ctl:8083/api/a2a/ns/special" = "rest"
"""
    )
    s = load_settings({}, env)
    assert s.rewind_mode_for("http://other:1/a2a/") == "a2a"
    assert s.rewind_mode_for("http://ctl:8083/api/a2a/ns/a/") == "off"
    assert s.rewind_mode_for("http://ctl:8083/api/a2a/ns/special/") == "rest"  # longest prefix
    assert s.rewind_mode_for("http://ctl:80830/x") == "a2a"  # a prefix of the host is no match
    assert load_settings({"url": "http://ctl:8083/api/a2a/ns/a/"}, env).server_config().rewind == "off"
    # flag and environment force a mode for whatever server is used
    assert load_settings({}, {**env, "REWINDTUI_REWIND": "REST"}).rewind_mode_for("http://ctl:8083/x") == "rest"
    s = load_settings({"rewind": "off", "url": "http://other/"}, {**env, "REWINDTUI_REWIND": "rest"})
    assert s.server_config().rewind == "off"
    # the short form: one mode for every server
    assert load_settings({}, config('rewind = "off"\n')).rewind_mode_for("http://x/") == "off"


@pytest.mark.parametrize(
    "text, message",
    [
        ("url = [", "not valid TOML"),
        ('urll = "http://x"', "unknown setting 'urll'"),
        ("url = 3", "url: expected a URL"),
        ('timeout = "soon"', "timeout: expected a positive number"),
        ('headers = "Authorization: x"', "headers: expected a table"),
        ('[rewind]\n"http://x" = "maybe"', "rewind.http://x: rewind mode must be one of"),
        ('[rewind]\n"not a url" = "off"', "not an http(s) URL"),
        ("rewind = 1", "rewind: expected a mode or a table"),
        ("[keymap]\nrewind = 1", "keymap.rewind: expected keys"),
        ('url = "http://a/"\nkagent = "http://b"\nagent = "n/a"', "not both"),
    ],
)
def test_bad_config_file_is_one_line_naming_the_file(config, tmp_path, text, message) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings({}, config(text))
    error = str(info.value)
    assert str(tmp_path / "config.toml") in error and message in error
    assert "\n" not in error


def test_named_config_file_must_exist(tmp_path) -> None:
    with pytest.raises(SettingsError, match="not found"):
        load_settings({"config": str(tmp_path / "missing.toml")}, {})
    with pytest.raises(SettingsError, match="not found"):
        load_settings({}, {"REWINDTUI_CONFIG": str(tmp_path / "missing.toml")})


def test_config_flag_beats_env(tmp_path) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text('theme = "a"\n')
    b.write_text('theme = "b"\n')
    assert load_settings({"config": str(a)}, {"REWINDTUI_CONFIG": str(b)}).theme == "a"
    assert load_settings({}, {"REWINDTUI_CONFIG": str(b)}).theme == "b"


def test_namespace_flags_and_with_server(config) -> None:
    import argparse

    ns = argparse.Namespace(url=None, user_id="u", header=None, data_dir="rel")
    s = load_settings(ns, config(""))
    assert s.user_id == "u" and s.data_dir is not None and s.data_dir.is_absolute()
    assert s.resolved_data_dir() == s.data_dir
    with pytest.raises(SettingsError):
        s.server_config()
    live = s.with_server("http://127.0.0.1:9/api/a2a/local/demo/", "http://127.0.0.1:9/api")
    assert not live.embedded and live.server_config().api == "http://127.0.0.1:9/api"
    assert isinstance(Settings().resolved_data_dir(), Path)


def test_debug_switch_is_read_through_settings(tmp_path):
    from rewindtui.config.settings import debug_enabled

    assert debug_enabled({"REWINDTUI_DEBUG": "1"}) and debug_enabled({"REWINDTUI_DEBUG": "yes"})
    assert (
        not debug_enabled({})
        and not debug_enabled({"REWINDTUI_DEBUG": "0"})
        and not debug_enabled({"REWINDTUI_DEBUG": "off"})
    )
    config = tmp_path / "c.toml"
    config.write_text("")
    assert load_settings({"config": str(config)}, env={"REWINDTUI_DEBUG": "1"}).debug
    assert not load_settings({"config": str(config)}, env={}).debug


def test_kagent_settings_give_the_client_the_agent_ref_and_both_proxy_paths(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("")
    s = load_settings({"kagent": "http://ctl:8083/", "agent": "ns/helper", "config": str(config)}, env={})
    c = s.server_config()
    assert c.url == "http://ctl:8083/api/a2a/ns/helper/" and c.api == "http://ctl:8083/api"
    assert c.agent_ref == "ns/helper"
    assert c.fallback_urls == ("http://ctl:8083/api/a2a-sandboxes/ns/helper/",)
    assert c.local_store == s.resolved_data_dir() / "sessions.db"
    plain = load_settings({"url": "http://agent/", "config": str(config)}, env={}).server_config()
    assert plain.agent_ref is None and plain.fallback_urls == ()
