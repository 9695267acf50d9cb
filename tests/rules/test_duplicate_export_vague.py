"""duplicate-export leaves out the C++ special names of vague linkage, which every C++ library
may export as strong symbols (official pyarrow wheels: 134 warnings of typeinfo names, local
statics of inline functions, vtables), and still reports the functions two libraries share."""

from __future__ import annotations

import json
from pathlib import Path

from tests.loader.dagbuild import Lib, elf_bytes

from ..output.schema import validate_report

VAGUE = (
    "_ZTSN5arrow7compute19RunEndEncodeOptionsE",  # typeinfo name
    "_ZTIN5arrow7compute19RunEndEncodeOptionsE",  # typeinfo
    "_ZTVN5arrow7compute19RunEndEncodeOptionsE",  # vtable
    "_ZTTN5arrow2io10FileOutputE",  # VTT
    "_ZTCN5arrow2io10FileOutputE0_NS0_6WriterE",  # construction vtable
    "_ZZSt19_Sp_make_shared_tag5_S_tiEvE5__tag",  # a local static of an inline function
    "_ZZN5arrow4util6LoggerEvE8instance",
    "_ZGVZN5arrow4util6LoggerEvE8instance",  # its guard variable
    "_ZGR5arrowL1x_",  # reference temporary
    "_ZTHN5arrow6threadE",  # thread_local init
    "_ZTWN5arrow6threadE",  # thread_local wrapper
)
SHARED = ("_ZN5arrow7compute8RegisterEv", "nccl_state")  # one archive linked into both: reported


def test_vague_linkage_names_are_not_duplicates(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for name in ("liba.so", "libb.so"):
        lib = Lib(name, soname=name, exports=(*VAGUE, *SHARED, f"own_{name[3]}"))
        (tmp_path / name).write_bytes(elf_bytes(lib))
    doc = json.loads(run_cli("check", "--no-config", "--no-loader", "--format", "json", str(tmp_path)).stdout)
    validate_report(doc)
    (finding,) = [f for f in doc["findings"] if f["rule"] == "duplicate-export"]
    assert sorted(finding["evidence"]["symbols"]) == sorted(SHARED)
    assert finding["evidence"]["count"] == len(SHARED)
