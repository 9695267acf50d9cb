#!/usr/bin/env bash
# Rebuild the COFF fixtures under sample_bins/coff/ from sample_bins/src/coff/: objects (.obj)
# and Windows libraries (.lib) for the link-time half of the seed bug (issue 17).
#
#   bash sample_bins/build_coff.sh
#
# Deterministic: -mno-incremental-linker-compatible writes a zero TimeDateStamp, llvm-lib and
# llvm-dlltool write none.  Nothing that is built is executed or linked.  Debian packages (bookworm):
#   clang                      x86-64, i386 and ARM64 objects (--target=*-pc-windows-msvc)
#   llvm-16                    llvm-lib-16, llvm-dlltool-16 (import libraries from .def files)
#   gcc-mingw-w64-x86-64       the /bigobj object (GNU as -mbig-obj; clang 14 cannot write one)
set -euo pipefail
export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/src/coff"
OUT="$HERE/coff"
for tool in clang llvm-lib-16 llvm-dlltool-16 x86_64-w64-mingw32-gcc; do
    if ! command -v "$tool" >/dev/null; then
        echo "skipped: $tool not found (see the packages above); committed files left as they are"
        exit 0
    fi
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkaudit-coff.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

obj() {  # obj TARGET SOURCE OUT [clang flags...]
    local target=$1 src=$2 out=$3
    shift 3
    (cd "$SRC" && clang "--target=$target" -mno-incremental-linker-compatible -O1 -fno-ident \
        -fdebug-prefix-map="$SRC=src/coff" -c "$src" -o "$WORK/$out" "$@")
}

# The seed's objects: torch_cuda.obj calls nine nvrtc* functions (one through __imp_);
# driver_use.obj calls the driver API through dllimport (__imp_cuInit).
obj x86_64-pc-windows-msvc torch_cuda.c torch_cuda.obj
obj x86_64-pc-windows-msvc driver_use.c driver_use.obj
obj aarch64-pc-windows-msvc torch_cuda.c torch_cuda_arm64.obj
# Symbol-table features: weak external, COMDAT any, directives, a common symbol.
obj x86_64-pc-windows-msvc features.c features.obj -fcommon
# -ffunction-sections: every function a COMDAT section with selection NODUPLICATES.
obj x86_64-pc-windows-msvc nodup.c nodup.obj -ffunction-sections
# x86 decoration: _c_plain, _s_call@8, @f_call@8, v_call@@8, _imported_std@8.
obj i686-pc-windows-msvc decorated.c decorated.obj
# /bigobj: GNU as writes ANON_OBJECT_HEADER_BIGOBJ with -mbig-obj.
(cd "$SRC" && x86_64-w64-mingw32-gcc -O1 -fno-ident -Wa,-mbig-obj -c bigobj.c -o "$WORK/bigobj.obj")

# Import libraries (short import members) by llvm-dlltool (llvm-lib-16 has no /def): cuda.lib (the
# driver, nvcuda.dll), nvrtc.lib (nvrtc64_120_0.dll), legacy32.lib (i386, decorated names).
(cd "$WORK" && llvm-dlltool-16 -m i386:x86-64 -d "$SRC/cuda.def" -l cuda.lib)
(cd "$WORK" && llvm-dlltool-16 -m i386:x86-64 -d "$SRC/nvrtc.def" -l nvrtc.lib)
(cd "$WORK" && llvm-dlltool-16 -m i386 -d "$SRC/stdcall.def" -l legacy32.lib)
# -k (kill-at): the names in the DLL are undecorated (IMPORT_NAME_UNDECORATE); an ARM64 nvrtc.lib.
(cd "$WORK" && llvm-dlltool-16 -m i386 -k -d "$SRC/stdcall.def" -l legacy32_k.lib)
(cd "$WORK" && llvm-dlltool-16 -m arm64 -d "$SRC/nvrtc.def" -l nvrtc_arm64.lib)
# A static library of COFF objects (long member names go to the // member).
(cd "$WORK" && cp features.obj a_member_name_longer_than_sixteen.obj &&
    llvm-lib-16 -nologo -out:static.lib a_member_name_longer_than_sixteen.obj nodup.obj)
rm "$WORK/a_member_name_longer_than_sixteen.obj"

mkdir -p "$OUT"
rm -f "$OUT"/*.obj "$OUT"/*.lib
cp "$WORK"/*.obj "$WORK"/*.lib "$OUT/"
ls -l "$OUT"
