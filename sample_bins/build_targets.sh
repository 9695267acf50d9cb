#!/usr/bin/env bash
# Rebuild sample_bins/targets/: binaries for other targets than the auditing host.
#
#   bash sample_bins/build_targets.sh
#
# targets/aarch64/ (clang + lld: Debian clang, lld): an aarch64 extension module linked
#   against stand-ins for aarch64 glibc's libc.so.6 and libm.so.6 (src/targets/stub*.c with
#   their version scripts), which are NOT kept: as on an x86-64 auditing host, the target's
#   system libraries are absent, and the platform policy must stand for them.
# targets/musl/ (musl-gcc: Debian musl-tools): see the section below.
#
# Deterministic (SOURCE_DATE_EPOCH=0, no build id, stripped). A target whose compiler is
# missing is skipped with a message and its committed files are kept. Nothing built is run.
set -euo pipefail

export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC
umask 022
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/src/targets"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkaudit-targets.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if command -v clang >/dev/null && command -v ld.lld >/dev/null; then
    echo "== targets/aarch64 (clang --target=aarch64-linux-gnu, lld)"
    A=(clang --target=aarch64-linux-gnu -O1 -g0 -fPIC -nostdlib -shared -fuse-ld=lld
       -Wl,--build-id=none -Wl,-s -Wl,--hash-style=gnu "-ffile-prefix-map=$SRC=src")
    mkdir -p "$WORK/a"
    "${A[@]}" -Wl,--version-script="$SRC/stubc.map" -Wl,-soname,libc.so.6 "$SRC/stubc.c" -o "$WORK/a/libc.so.6"
    "${A[@]}" -Wl,--version-script="$SRC/stubm.map" -Wl,-soname,libm.so.6 "$SRC/stubm.c" -o "$WORK/a/libm.so.6"
    "${A[@]}" -Wl,-soname,libmissing.so.1 "$SRC/missing.c" -o "$WORK/a/libmissing.so.1"
    "${A[@]}" -Wl,-soname,ld-linux-aarch64.so.1 "$SRC/missing.c" -o "$WORK/a/ld-linux-aarch64.so.1"
    "${A[@]}" "$SRC/aarch64ext.c" -o "$WORK/a/aarch64ext.cpython-311-aarch64-linux-gnu.so" \
        "$WORK/a/libmissing.so.1" "$WORK/a/libm.so.6" "$WORK/a/libc.so.6" "$WORK/a/ld-linux-aarch64.so.1"
    mkdir -p "$HERE/targets/aarch64"
    cp "$WORK/a/aarch64ext.cpython-311-aarch64-linux-gnu.so" "$HERE/targets/aarch64/"
else
    echo "SKIP targets/aarch64: needs clang and lld (apt-get install clang lld); committed files kept"
fi

# targets/musl/ (musl-gcc, Debian musl-tools): where musl's loader and glibc's disagree.
#   inherit/app          RUNPATH $ORIGIN/lib, NEEDs liba.so; lib/liba.so NEEDs libb.so, no rpath:
#                        musl searches the rpath of the loader chain (app's), glibc does not
#                        (RUNPATH is not inherited) -> glibc: libb.so not found; musl: found.
#   version/vapp         NEEDs libprov.so with v_value@PROV_2; the libprov.so beside it defines
#                        v_value@PROV_1 only: glibc: version `PROV_2' not found; musl binds by name.
#   libtoken/app         RPATH $ORIGIN/lib:$LIB/none, NEEDs liba.so: musl voids the whole rpath
#                        ($LIB is no token of musl's) -> not found; glibc expands it and finds it.
#   (the same liba.so/libb.so beside each app)
#   ext/_libconly...so   an extension module linked without libc: its symbols are musl's (the loader's)
#   pyuser/libpyuser.so  a package's helper that no extension NEEDs (dlopened by the package), calling
#                        PyLong_FromLong: beside the extension (mod...so, NEEDs musl's libc.so) it is a
#                        dlopen in the interpreter, whose C API is in the global scope
if command -v musl-gcc >/dev/null; then
    echo "== targets/musl (musl-gcc)"
    M=(musl-gcc -O1 -g0 -fPIC -Wl,--build-id=none -Wl,-s -Wl,--hash-style=gnu -Wl,--no-as-needed -Wl,-z,noseparate-code
       "-ffile-prefix-map=$SRC=src")
    MS="$SRC/musl"
    W="$WORK/m"
    mkdir -p "$W"/{inherit/lib,version,libtoken/lib,build}
    "${M[@]}" -shared -Wl,-soname,libb.so "$MS/libb.c" -o "$W/inherit/lib/libb.so"
    "${M[@]}" -shared -Wl,-soname,liba.so "$MS/liba.c" -o "$W/inherit/lib/liba.so" "$W/inherit/lib/libb.so"
    "${M[@]}" "$MS/app.c" -o "$W/inherit/app" -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib' \
        "$W/inherit/lib/liba.so" -Wl,-rpath-link,"$W/inherit/lib"
    cp "$W/inherit/lib/liba.so" "$W/inherit/lib/libb.so" "$W/libtoken/lib/"
    "${M[@]}" "$MS/app.c" -o "$W/libtoken/app" -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/lib:$LIB/none' \
        "$W/inherit/lib/liba.so" -Wl,-rpath-link,"$W/inherit/lib"
    "${M[@]}" -shared -Wl,-soname,libprov.so -Wl,--version-script="$MS/prov_new.map" "$MS/prov.c" -o "$W/build/libprov.so"
    "${M[@]}" "$MS/vapp.c" -o "$W/version/vapp" -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN' "$W/build/libprov.so"
    "${M[@]}" -shared -Wl,-soname,libprov.so -Wl,--version-script="$MS/prov_old.map" "$MS/prov.c" -o "$W/version/libprov.so"
    mkdir -p "$W/ext"  # an extension module without DT_NEEDED: strlen, memcpy, __cxa_finalize from musl
    "${M[@]}" -shared -nodefaultlibs "$HERE/src/ext_libc.c" -o "$W/ext/_libconly.cpython-311-x86_64-linux-musl.so"
    mkdir -p "$W/pyuser"
    "${M[@]}" -shared "$HERE/src/ext_libc.c" -o "$W/pyuser/mod.cpython-311-x86_64-linux-musl.so"
    "${M[@]}" -shared -Wl,-soname,libpyuser.so "$MS/pyuser.c" -o "$W/pyuser/libpyuser.so"
    rm -rf "$W/build"
    rm -rf "$HERE/targets/musl"
    cp -r "$W" "$HERE/targets/musl"
else
    echo "SKIP targets/musl: needs musl-gcc (apt-get install musl-tools); committed files kept"
fi
