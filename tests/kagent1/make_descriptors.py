"""Make ``tests/fixtures/kagent1/*.binpb``: kagent's own compiled descriptors, at pinned commits.

    python tests/kagent1/make_descriptors.py            # write the .binpb files
    python tests/kagent1/make_descriptors.py --check    # fail if they differ from what is committed

The source is ``tests/fixtures/kagent1/kagent_pb_ts.json``: the ``fileDesc("...")`` argument of
kagent's generated TypeScript (``ui/src/generated/kagent/api/v1alpha1/*_pb.ts``; protoc-gen-es
embeds each ``.proto`` file compiled by kagent's own build), copied verbatim with its repository,
path and commit. ``--from-ts FILE.ts NAME`` re-reads one entry from a ``_pb.ts`` file of a kagent
checkout (its commit is then up to you to record in the JSON).

What this script changes, and only this: the embedded descriptor leaves out its imports (they are
the second argument of ``fileDesc``), so they are put back from the JSON's ``imports``; the
``buf/validate`` import and the field options it defines are dropped (request validation, not the
wire: a field's number, name, type and label are untouched).

The test double of kagent 1.0's controller (``controller_double.py``) builds its message classes
from these files, never from rewindtui's own ``kagent1.proto``; ``test_kagent_wire.py`` decodes
what the client sends with them.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kagent1"
SOURCE = FIXTURES / "kagent_pb_ts.json"
DROPPED_IMPORTS = {"buf/validate/validate.proto"}
BUF_VALIDATE_FIELD = 1159  # (buf.validate.field), the only option kagent's files set on these fields


def descriptor(entry: dict[str, object]) -> descriptor_pb2.FileDescriptorProto:
    text = str(entry["fileDesc"])
    fd = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(text + "=" * (-len(text) % 4)))
    del fd.dependency[:]
    fd.dependency.extend(i for i in entry["imports"] if i not in DROPPED_IMPORTS)  # type: ignore[attr-defined]
    for message in fd.message_type:
        _strip(message)
    return fd


def _strip(message: descriptor_pb2.DescriptorProto) -> None:
    for field in message.field:
        if field.HasField("options"):
            options = descriptor_pb2.FieldOptions()
            options.MergeFromString(field.options.SerializeToString())
            # keep every option but buf.validate's (the field's unknown extension 1159)
            kept = descriptor_pb2.FieldOptions()
            for f, value in options.ListFields():
                getattr(kept, f.name).CopyFrom(value) if f.message_type else setattr(kept, f.name, value)
            if kept.ByteSize():
                field.options.CopyFrom(kept)
            else:
                field.ClearField("options")
    for nested in message.nested_type:
        _strip(nested)


def binpb(name: str) -> Path:
    return FIXTURES / f"{name}.binpb"


def from_ts(path: Path) -> str:
    match = re.search(r'fileDesc\("([A-Za-z0-9+/=_-]+)"', path.read_text())
    if match is None:
        raise SystemExit(f'{path}: no fileDesc("...") in it')
    return match.group(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed .binpb files")
    parser.add_argument(
        "--from-ts", nargs=2, metavar=("FILE", "NAME"), help="update entry NAME from a kagent _pb.ts file"
    )
    args = parser.parse_args(argv)
    source = json.loads(SOURCE.read_text())
    if args.from_ts:
        ts, name = args.from_ts
        source["files"][name]["fileDesc"] = from_ts(Path(ts))
        SOURCE.write_text(json.dumps(source, indent=2) + "\n")
    stale = []
    for name, entry in source["files"].items():
        data = descriptor(entry).SerializeToString(deterministic=True)
        if args.check:
            if not binpb(name).exists() or binpb(name).read_bytes() != data:
                stale.append(name)
        else:
            binpb(name).write_bytes(data)
            print(f"{binpb(name).name}: {entry['path']}@{str(entry['commit'])[:8]} ({len(data)} bytes)")
    if stale:
        print(f"stale: {', '.join(stale)} (run tests/kagent1/make_descriptors.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
