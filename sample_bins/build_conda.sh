#!/usr/bin/env bash
# Rebuild sample_bins/conda/: a tiny conda package, in both formats (.tar.bz2 and .conda), from
# sample_bins/src/conda/ (see pack.py for what it holds and declares).
#
#   bash sample_bins/build_conda.sh
#
# Deterministic (two runs give byte-identical files with the same toolchain and zstandard).
# Debian packages: gcc binutils libc6-dev python3; Python: zstandard (pip install '.[test]').
# PYTHON: an interpreter with zstandard (default python3), e.g. PYTHON=.venv/bin/python.
# Nothing built is executed.
set -euo pipefail
export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC
umask 022
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/src/conda"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkaudit-conda.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CC=${CC:-gcc}
CFLAGS=(-O1 -g0 -fno-ident -fno-builtin -fPIC "-ffile-prefix-map=$SRC=src" "-ffile-prefix-map=$WORK=build")
LDFLAGS=(-shared -nostartfiles -Wl,--build-id=none -Wl,-z,noseparate-code -Wl,-s -Wl,--no-as-needed -Wl,--hash-style=gnu)
mkdir -p "$WORK/stub" "$WORK/stage/lib"
cd "$WORK"
for soname in libcudart.so.13 libz.so.1; do
  "$CC" "${CFLAGS[@]}" "${LDFLAGS[@]}" -Wl,-soname,"$soname" -o "stub/$soname" "$SRC/stub.c"
done
"$CC" "${CFLAGS[@]}" "${LDFLAGS[@]}" -Wl,-soname,libcondahelper.so -o stage/lib/libcondahelper.so "$SRC/stub.c"
"$CC" "${CFLAGS[@]}" "${LDFLAGS[@]}" -Wl,-soname,libcondademo.so -Wl,-rpath,'$ORIGIN' \
  -o stage/lib/libcondademo.so "$SRC/demo.c" stage/lib/libcondahelper.so stub/libcudart.so.13 stub/libz.so.1 -lc
"${PYTHON:-python3}" "$SRC/pack.py" stage "$HERE/conda"
ls -l "$HERE/conda"
