"""Regenerate ``gen/`` from ``proto/kagent1.proto`` (kagent's own messages, copied with their
sources; see its header).

    python -m rewindtui.kagent1.regenerate

Needs grpcio-tools (the ``kagent1-dev`` extra). The generated modules are committed; this script
is the only way they are made.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    from grpc_tools import protoc

    well_known = Path(protoc.__file__).resolve().parent / "_proto"
    out = HERE / "gen"
    args = [
        "protoc",
        f"-I{HERE / 'proto'}",
        f"-I{well_known}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        str(HERE / "proto" / "kagent1.proto"),
    ]
    code = int(protoc.main(args))
    if code == 0:
        # the generated service module imports its messages as a top-level module: make it relative
        grpc_module = out / "kagent1_pb2_grpc.py"
        text = grpc_module.read_text()
        grpc_module.write_text(
            text.replace("import kagent1_pb2 as kagent1__pb2", "from . import kagent1_pb2 as kagent1__pb2")
        )
    return code


if __name__ == "__main__":
    sys.exit(main())
