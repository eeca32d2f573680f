"""Regenerate ``gen/`` from ``proto/kagent1.proto`` (rewindtui's own proto; see its header).

    python -m rewindtui.kagent1.regenerate

Needs grpcio-tools (the ``kagent1-dev`` extra) and googleapis-common-protos (for
``google/longrunning/operations.proto``, which it ships as ``operations_proto.proto`` and loads
as ``google.longrunning.operations_pb2``). The generated modules are committed; this script is the
only way they are made.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    import google.longrunning.operations_proto_pb2 as lro
    from grpc_tools import protoc

    googleapis = Path(lro.__file__).resolve().parents[2]
    well_known = Path(protoc.__file__).resolve().parent / "_proto"
    out = HERE / "gen"
    with tempfile.TemporaryDirectory() as tmp:
        # the file name the installed module was built from
        (Path(tmp) / "google" / "longrunning").mkdir(parents=True)
        shutil.copy(googleapis / "google" / "longrunning" / "operations_proto.proto", Path(tmp) / "google" / "longrunning" / "operations.proto")
        args = [
            "protoc",
            f"-I{HERE / 'proto'}",
            f"-I{tmp}",
            f"-I{googleapis}",
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
        grpc_module.write_text(text.replace("import kagent1_pb2 as kagent1__pb2", "from . import kagent1_pb2 as kagent1__pb2"))
    return code


if __name__ == "__main__":
    sys.exit(main())
