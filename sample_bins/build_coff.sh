#!/usr/bin/env bash
# Rebuild the COFF fixtures under sample_bins/coff/ from sample_bins/src/coff/: objects (.obj)
# and Windows libraries (.lib) for the link-time half of the seed bug (issue 17).
#
#   bash sample_bins/build_coff.sh
#
# Deterministic: -mno-incremental-linker-compatible writes a zero TimeDateStamp, llvm-lib and
# llvm-dlltool write none.  Nothing that is built is executed or linked.  Debian packages (bookworm):
#   clang-16                   x86-64, i386 and ARM64 objects (--target=*-pc-windows-msvc; clang
#                              when there is no clang-16)
#   llvm-16                    llvm-lib-16, llvm-dlltool-16 (import libraries from .def files)
#   gcc-mingw-w64-x86-64       the /bigobj object (GNU as -mbig-obj; clang 14 cannot write one)
set -euo pipefail
export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/src/coff"
OUT="$HERE/coff"
CLANG=$(command -v clang-16 || command -v clang || echo clang)
for tool in "$CLANG" llvm-lib-16 llvm-dlltool-16 x86_64-w64-mingw32-gcc x86_64-w64-mingw32-dlltool; do
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
    (cd "$SRC" && "$CLANG" "--target=$target" -mno-incremental-linker-compatible -O1 -fno-ident \
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
# Duplicates (LNK2005): a second NODUPLICATES copy, plain .text definitions twice, a second
# selectany (COMDAT ANY) definition of features.obj's shared_constant.
obj x86_64-pc-windows-msvc nodup.c nodup_copy.obj -ffunction-sections
obj x86_64-pc-windows-msvc nodup.c nodup_plain.obj
obj x86_64-pc-windows-msvc nodup.c nodup_plain_copy.obj
obj x86_64-pc-windows-msvc any_again.c any_again.obj
# Library search order: link.exe and lld-link take shared_fn from different libraries.
for part in main m2 p1 p3; do obj x86_64-pc-windows-msvc "order_$part.c" "order_$part.obj"; done
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
(cd "$WORK" && llvm-lib-16 -nologo -out:order1.lib order_p1.obj && llvm-lib-16 -nologo -out:order2.lib order_m2.obj &&
    llvm-lib-16 -nologo -out:order3.lib order_p3.obj && rm order_p1.obj order_m2.obj order_p3.obj)
# The GNU long import format (mingw dlltool): one object per symbol, _head_ and the tail's .idata$7
# naming the DLL; no second linker member.  --temp-prefix keeps member names fixed.
(cd "$WORK" && x86_64-w64-mingw32-dlltool -d "$SRC/nvrtc.def" -D nvrtc64_120_0.dll -l nvrtc.dll.a --temp-prefix nvrtc)

mkdir -p "$OUT"
rm -f "$OUT"/*.obj "$OUT"/*.lib
rm -f "$OUT"/*.dll.a
cp "$WORK"/*.obj "$WORK"/*.lib "$WORK"/*.dll.a "$OUT/"
ls -l "$OUT"
