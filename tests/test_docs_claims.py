"""Docs that cannot drift: what README.md and docs/*.md name must exist.

The claims are found generically, so a new page is checked without a change here:

- **paths**: an inline-code span that names a file (``tui/host.py``, ``tests/kit/``,
  ``src/rewindtui/a2a/kagent.py``, ``widgets/transcript.py``) -- it ends in a file suffix, or its
  first folder is one of the repository's folders -- must be a file or folder of the repository
  (a path may be written from the repository's root, from ``src/rewindtui/`` or from any folder
  down, as long as it names one real path); ``tui/turn_buttons.TurnButtons`` names a definition in
  that module;
- **modules**: ``rewindtui.server.shared.wire.effective_events`` must be a module of the tree and a
  name defined in it;
- **commands**: ``rewindtui CMD --flag`` in inline code or a code block: CMD must be a command and
  each flag must be in that command's ``--help`` (or the app's own, for options given before it);
- **keys**: every key named in a table whose first column is "key" must be a key of the
  interaction table (``rewindtui.tui.interaction``), and every ``/command`` a slash command of it;
- **docs/cli.md** lists every command of ``rewindtui --help`` and every option of each command's
  ``--help`` (the connection options every command shares are named once, for all);
- **folders listed in full**: a section whose heading names a folder (``(`tui/`)``) and that holds
  a "module" table must name every module of that folder.
"""

from __future__ import annotations

import contextlib
import io
import re
from functools import cache
from pathlib import Path

import pytest

from rewindtui.cli.main import main as cli_main
from rewindtui.tui import interaction

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "rewindtui"
DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SUFFIXES = (".py", ".md", ".toml", ".proto", ".json", ".tcss", ".svg", ".yaml", ".yml", ".txt", ".cfg", ".sh")
SKIP_DIRS = {".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", "node_modules"}
#: module roots of the repository (the app, and the kagent add-on installed on its own)
MODULE_ROOTS = {"rewindtui": ROOT / "src", "kagent_rewind": ROOT / "kagent-rewind" / "src"}


# -- reading the docs ----------------------------------------------------------------------------
@cache
def repo_paths() -> tuple[frozenset[str], frozenset[str]]:
    """(every file and folder as a path from the root, every folder's name)"""
    paths: set[str] = set()
    names: set[str] = set()
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.name in SKIP_DIRS or entry.name.endswith(".egg-info"):
                continue
            rel = entry.relative_to(ROOT).as_posix()
            if entry.is_dir():
                paths.add(rel + "/")
                names.add(entry.name)
                stack.append(entry)
            else:
                paths.add(rel)
    return frozenset(paths), frozenset(names)


def spans(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of each inline-code span of a page."""
    out = []
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        out += [
            (number, m.group(1)) for m in re.finditer(r"`([^`]+)`(?!@[0-9a-f]{6,})", line) if not foreign(m.group(1))
        ]
    return out


def foreign(text: str) -> bool:
    """Another project's file: named at a commit (`path`@abc1234, skipped by the pattern above) or
    in a language this project does not write (kagent's Go and TypeScript)."""
    return text.endswith((".go", ".ts"))


def code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines of a page's code blocks (fenced, or indented four spaces
    after a blank line)."""
    out = []
    fenced = False
    block = False
    previous = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced:
            out.append((number, line))
        else:
            block = line.startswith("    ") and (block or not previous.strip())
            if block:
                out.append((number, line))
        previous = line
    return out


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


# -- paths ---------------------------------------------------------------------------------------
PATHLIKE = re.compile(r"^[\w.\-/]+$")


def path_claim(text: str) -> str | None:
    """The path a span names, or None when it names none."""
    text = text.strip()
    if not PATHLIKE.match(text) or text.startswith(("/", "-", ".")) or "//" in text:
        return None
    if any(c.isupper() for c in text.split(".", 1)[0]):  # `agent/getAuthenticatedExtendedCard`: a method
        return None
    _, folders = repo_paths()
    first = text.split("/", 1)[0]
    if "/" in text and first in folders:
        return text
    if "/" in text and text.endswith(SUFFIXES):
        return text
    return None


def _module_file(path: str) -> Path | None:
    """``tui/turn_buttons`` → the file of that module (found like a path)."""
    found = resolve(path + ".py")
    return ROOT / found if found else None


def resolve(claim: str) -> str | None:
    """The repository path a claimed path names, or None: from the root, from ``src/rewindtui/``,
    else from any folder down (the package's own before the tests', then in path order)."""
    paths, _ = repo_paths()
    bare = claim.rstrip("/")
    for base in ("", "src/rewindtui/"):
        for candidate in (base + bare, base + bare + "/"):
            if candidate in paths:
                return candidate
    tail = "/" + bare
    found = sorted(
        (p for p in paths if p.rstrip("/").endswith(tail)),
        key=lambda p: (not p.startswith("src/"), p),
    )
    return found[0] if found else None


def defines(file: Path, name: str) -> bool:
    text = file.read_text(encoding="utf-8")
    return (
        re.search(rf"^\s*(class|def|async def)\s+{re.escape(name)}\b|^\s*{re.escape(name)}\s*[:=]", text, re.M)
        is not None
    )


def check_path(claim: str) -> str | None:
    """Why ``claim`` is wrong, or None."""
    if resolve(claim) is not None:
        return None
    # `tui/turn_buttons.TurnButtons`: a module and a name in it
    head, _, name = claim.rpartition(".")
    if head and not claim.endswith(SUFFIXES) and name.isidentifier():
        module = _module_file(head)
        if module is None:
            return f"no module {head}.py"
        return None if defines(module, name) else f"{head}.py defines no {name}"
    return "no such file or folder"


LISTING = re.compile(r"^\s*(?:[-*]\s+)?`([\w/]+)/`\s*[—:–-]")


def package_listings(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, folder, file names) of each line that lists a folder's modules: "`chat/` — `base.py`
    (state), `turns.py` …" (a bullet's wrapped lines belong to it)."""
    out: list[tuple[int, str, list[str]]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = LISTING.match(line)
        if m:
            out.append((number, m.group(1), []))
        elif not line.strip() or line.lstrip().startswith(("-", "*", "#", "|")):
            if out and out[-1][0] != -1:
                out.append((-1, "", []))  # the listing ended
            continue
        if out and out[-1][0] != -1:
            out[-1][2].extend(re.findall(r"`([\w-]+\.py)`", line))
    return [entry for entry in out if entry[0] != -1]


# -- modules -------------------------------------------------------------------------------------
MODULE = re.compile(r"^(rewindtui|kagent_rewind)(\.\w+)+$")
#: ``rewindtui.db`` is a file, not a module
FILE_ENDINGS = {"db", "json", "toml", "txt", "log", "md", "py", "proto", "yaml", "sqlite"}


def check_module(dotted: str) -> str | None:
    parts = dotted.split(".")
    base = MODULE_ROOTS[parts[0]]
    for cut in range(len(parts), 0, -1):
        path = base.joinpath(*parts[:cut])
        file = path.with_suffix(".py") if path.with_suffix(".py").is_file() else path / "__init__.py"
        if file.is_file():
            rest = parts[cut:]
            if not rest:
                return None
            if len(rest) > 2:
                return f"no module {'.'.join(parts[: cut + 1])}"
            return None if defines(file, rest[0]) else f"{'.'.join(parts[:cut])} defines no {rest[0]}"
    return "no such module"


# -- commands ------------------------------------------------------------------------------------
def help_of(*argv: str) -> str:
    """What ``rewindtui ARGV --help`` prints (in-process: the command's real parser)."""
    return _help(tuple(argv))


@cache
def _help(argv: tuple[str, ...]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
        code = cli_main([*argv, "--help"])
        assert code == 0, f"rewindtui {' '.join(argv)} --help exited {code}"
    return out.getvalue()


def flags(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][\w-]*", text))


@cache
def commands() -> dict[str, str]:
    """command → its ``--help``."""
    section = help_of().split("commands:", 1)[1].split("\n\n", 1)[0]
    return {name: help_of(name) for name in re.findall(r"^ {4}([a-z][\w-]*)\s", section, re.M)}


#: a command line: ``rewindtui`` first in a span or code line (or after ``&&``, ``|``, ``;``, ``$``)
COMMAND = re.compile(r"(?:^|&&|\|\||[|;$])\s*rewindtui((?:[ \t]+[^\s`|#]+)*)", re.M)


def command_claims(text: str) -> list[tuple[str, set[str]]]:
    """(command or "", the flags given) for each ``rewindtui …`` in ``text``."""
    out = []
    for m in COMMAND.finditer(text):
        words = m.group(1).split()
        command = ""
        if words and re.match(r"^[a-z][\w-]*$", words[0]):
            command = words[0]
        given = set()
        for word in words:
            given |= {f.split("=")[0] for f in re.findall(r"--[a-z][\w=-]*", word)}
        out.append((command, given))
    return out


def subcommands(command: str) -> list[str]:
    """The subcommands a command's ``--help`` lists as ``{a,b,c}`` (none for most)."""
    if not command:
        return []
    text = commands()[command]
    usage = text.split("\n\n", 1)[0]
    found = re.findall(r"(?<![\w-] )\{([a-z][\w,-]*)\}", usage)  # not an option's choices (--flow {a,b})
    subs = [sub for group in found for sub in group.split(",")]
    if re.search(r"\bACTION \.\.\.", usage):  # a metavar hides the list: read it from "positional arguments"
        subs += re.findall(
            r"^ {4}([a-z][\w-]*)\s", text.split("positional arguments:", 1)[-1].split("\n\n", 1)[0], re.M
        )
    return subs


def check_command(command: str, given: set[str]) -> str | None:
    known = commands()
    top = flags(help_of())
    if command and command not in known:
        return f"no command `{command}`"
    accepted = flags(known[command]) if command else top
    for sub in subcommands(command):  # `rewindtui task list --context-id`: the flags of its subcommands
        accepted |= flags(help_of(command, sub))
    if command and command != "serve":
        accepted |= top  # options given before the command
    unknown = sorted(f for f in given if f not in accepted and f != "--help")
    return f"`rewindtui {command}` has no {', '.join(unknown)}" if unknown else None


# -- keys ----------------------------------------------------------------------------------------
KEY_SPLIT = re.compile(r"\s+/\s+|\s+·\s+|,\s+|\s+or\s+")


@cache
def key_labels() -> frozenset[str]:
    labels: set[str] = set()
    for command in interaction.COMMANDS:
        labels |= {interaction.key_label(k.strip()) for k in command.keys.split(",") if k.strip()}
    for line in interaction.render_markdown().splitlines():
        if line.startswith("| ") and not line.startswith(("| key", "|---")):
            cell = line.split("|")[1].strip()
            labels |= {k.strip() for k in KEY_SPLIT.split(cell)}
    return frozenset(labels)


def key_cells(path: Path) -> list[tuple[int, str]]:
    """(line, key) for every key named in the first column of a table headed "key"/"keys"."""
    out = []
    in_table = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0].lower() in ("key", "keys"):
            in_table = True
            continue
        if in_table and not set(cells[0]) <= set("-: "):
            out += [(number, k.strip().strip("`")) for k in KEY_SPLIT.split(cells[0].replace("\\|", "|")) if k.strip()]
    return out


def check_key(key: str) -> str | None:
    if key.startswith("/"):
        name = key[1:].split()[0] if len(key) > 1 else ""
        return None if not name or name.strip("/") == "" or name in interaction.SLASH else f"no slash command {key}"
    return None if key in key_labels() else "no such key in the interaction table"


# -- folders a page lists in full ------------------------------------------------------------------
HEADING_FOLDER = re.compile(r"^#+ .*`([\w/]+)/`")


def listed_folders(path: Path) -> list[tuple[int, str]]:
    """(line, folder) of each section whose heading names a folder (``## The app's features
    (`tui/`)``) and that holds a table whose first column is "module": the page lists that folder's
    modules, so it must name every one of them."""
    out: list[tuple[int, str]] = []
    heading: tuple[int, str] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#"):
            m = HEADING_FOLDER.match(line)
            heading = (number, m.group(1)) if m else None
        elif heading and line.startswith("|") and line.strip("| ").lower().startswith("module"):
            out.append(heading)
            heading = None
    return out


def unlisted_modules(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    wrong = []
    for line, folder in listed_folders(path):
        found = resolve(folder + "/")
        if found is None:
            wrong.append(f"{where(path, line)}: `{folder}/`: no such folder")
            continue
        modules = sorted(p.name for p in (ROOT / found).glob("*.py") if p.name != "__init__.py")
        missing = [m for m in modules if f"`{m}`" not in text and f"{folder}/{m}" not in text]
        if missing:
            wrong.append(f"{where(path, line)}: `{folder}/` is listed, but not {', '.join(missing)}")
    return wrong


# -- the tests -----------------------------------------------------------------------------------
#: paths a page names that are not this repository's, and why
NOT_OURS = {
    ("docs/comparison.md", "tui/"): "a2a-handler's folder",
    ("docs/comparison.md", "tui/server/tab.py"): "a2a-handler's file",
    ("docs/testing.md", "tests/tui/__snapshots__/"): "the snapshot plugin's default, which we do not use",
}


def claims_of(path: Path) -> list[str]:
    """What is wrong on one page (empty when nothing is)."""
    wrong = []
    page = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    for line, text in spans(path):
        claim = path_claim(text)
        if claim is not None and (page, claim) not in NOT_OURS and (why := check_path(claim)):
            wrong.append(f"{where(path, line)}: `{text}`: {why}")
        if (
            MODULE.match(text.strip())
            and text.strip().rsplit(".", 1)[1] not in FILE_ENDINGS
            and (why := check_module(text.strip()))
        ):
            wrong.append(f"{where(path, line)}: `{text}`: {why}")
    for line, folder, files in package_listings(path):
        found = resolve(folder + "/")
        if found is None:
            wrong.append(f"{where(path, line)}: `{folder}/`: no such folder")
            continue
        under = [p for p in repo_paths()[0] if p.startswith(found.rstrip("/") + "/")]
        wrong += [
            f"{where(path, line)}: `{name}`: not in {found}"
            for name in files
            if not any(p.endswith("/" + name) for p in under)
        ]
    for line, text in [*spans(path), *code_lines(path)]:
        for command, given in command_claims(text):
            if why := check_command(command, given):
                wrong.append(f"{where(path, line)}: {why}")
    for line, key in key_cells(path):
        if why := check_key(key):
            wrong.append(f"{where(path, line)}: key {key!r}: {why}")
    return wrong + unlisted_modules(path)


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_module_command_flag_and_key_a_page_names_exists(page: Path) -> None:
    wrong = claims_of(page)
    assert not wrong, "the docs name what does not exist:\n" + "\n".join(wrong)


def test_cli_md_lists_every_command_and_option_of_the_help() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    listed = {command for command, _ in command_claims(page)}
    # an option is named on the page or on a page it links to for that command (docs/web.md …)
    linked = sorted(set(re.findall(r"docs/([\w-]+\.md)", page)))
    text = page + "".join((ROOT / "docs" / name).read_text(encoding="utf-8") for name in linked)
    every_page = "".join(p.read_text(encoding="utf-8") for p in DOCS)
    shared = flags(help_of("sessions"))  # the connection options (and --help, --json) every command takes
    missing = []
    for command, help_text in commands().items():
        if command not in listed:
            missing.append(f"command `{command}`")
            continue
        own = flags(help_text) - shared if command != "serve" else flags(help_text)
        missing += [f"`{command} {f}`" for f in sorted(own) if f not in text and f != "--help"]
    for flag in sorted(shared - {"--help"}):
        if flag not in every_page:
            missing.append(f"the shared option {flag} (on any page)")
    assert not missing, "docs/cli.md does not match `rewindtui --help`: missing " + ", ".join(missing)


# the checks themselves can fail (each on a made-up wrong claim)
def test_a_wrong_path_a_wrong_flag_a_wrong_key_and_a_wrong_module_are_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "The chat lives in `src/rewindtui/conversation/` and `chat/core.py`; see `tui/host.NoSuchThing`.\n"
        "- `conversation/` — `items.py`, `no_such_module.py`\n\n"
        "Run `rewindtui send --no-such-flag hi` or `rewindtui frobnicate`; `rewindtui.chat.core.NoSuchName`.\n\n"
        "| key | what |\n|---|---|\n| ctrl+z · alt+no-such-key | x |\n| `/rewind` · `/no-such-slash` | y |\n\n"
        "## What is shared (`base/`)\n\n| module | what |\n|---|---|\n| `dirs.py` | where things live |\n"
        "| `tls.py` | one TLS context |\n",
        encoding="utf-8",
    )
    wrong = [w.split(": ", 1)[1] for w in claims_of_at(page)]
    assert wrong == [
        "`src/rewindtui/conversation/`: no such file or folder",
        "`tui/host.NoSuchThing`: tui/host.py defines no NoSuchThing",
        "`rewindtui.chat.core.NoSuchName`: rewindtui.chat.core defines no NoSuchName",
        "`conversation/`: no such folder",
        "`rewindtui send` has no --no-such-flag",
        "no command `frobnicate`",
        "key 'alt+no-such-key': no such key in the interaction table",
        "key '/no-such-slash': no slash command /no-such-slash",
        "`base/` is listed, but not textsafe.py",
    ], wrong


def claims_of_at(page: Path) -> list[str]:
    """``claims_of`` for a page outside the repository (its line numbers as ``page:N``)."""
    global where
    saved = where
    where = lambda path, line: f"page:{line}"  # noqa: E731
    try:
        return claims_of(page)
    finally:
        where = saved
