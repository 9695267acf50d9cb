#!/usr/bin/env bash
# Rebuild every ELF fixture under sample_bins/ from sample_bins/src/.
#
#   bash sample_bins/build.sh
#
# Deterministic: running it twice gives byte-identical files (same toolchain).
# Everything is built in a temporary directory and then copied into place.
# Cross targets whose compiler is missing are skipped with a message and their
# committed outputs are left as they are.  Nothing that is built is executed.
#
# Debian packages (bookworm):
#   native x86-64 : gcc binutils libc6-dev python3
#   arch/lib32le  : gcc-i686-linux-gnu      (or gcc-multilib, for gcc -m32)
#   arch/lib64be  : gcc-s390x-linux-gnu
#   arch/lib32be  : gcc-powerpc-linux-gnu
# (gcc-multilib conflicts with the cross compilers on Debian, so the i686
#  cross compiler is preferred for lib32le.)
set -euo pipefail

export SOURCE_DATE_EPOCH=0
export LC_ALL=C
export TZ=UTC
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/src"
PATCH=(python3 "$SRC/elfpatch.py")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkaudit-bins.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OUT="$WORK/out"
mkdir -p "$OUT"/{driver,broken,fixed,ext/lib,misc,arch,corrupt} "$WORK/obj" "$WORK/stage"

CC=${CC:-gcc}

# Flags shared by every compile and link.
CFLAGS=(-O1 -g0 -fno-ident -fPIC
        "-ffile-prefix-map=$SRC=src" "-fdebug-prefix-map=$SRC=src"
        "-ffile-prefix-map=$WORK=build" "-fdebug-prefix-map=$WORK=build")
LDFLAGS=(-Wl,--build-id=none -Wl,-z,noseparate-code -Wl,-s -Wl,--no-as-needed)

# compile CC NAME SRCFILE -> $WORK/obj/NAME.o   (run from $WORK: relative names)
compile() {
    local cc=$1 name=$2 src=$3
    shift 3
    (cd "$WORK" && $cc "${CFLAGS[@]}" "$@" -c "$SRC/$src" -o "obj/$name.o")
}

# so CC OUTPATH OBJNAME [link args...]: link a shared library (GNU hash
# unless the args say otherwise; a later --hash-style wins).
so() {
    local cc=$1 out=$2 obj=$3
    shift 3
    (cd "$WORK" && $cc -shared "${CFLAGS[@]}" "${LDFLAGS[@]}" -Wl,--hash-style=gnu \
        -o "$out" "obj/$obj.o" "$@")
}

echo "== native x86-64 ($($CC -dumpmachine))"

# driver/libcuda.so.1: the GPU driver stub.
compile "$CC" cuda_driver_stub cuda_driver_stub.c
so "$CC" out/driver/libcuda.so.1 cuda_driver_stub -Wl,-soname,libcuda.so.1

# fixed/libnvrtc.so.12: NVRTC stub with version node "libnvrtc.so.12".
compile "$CC" nvrtc_stub nvrtc_stub.c
so "$CC" out/fixed/libnvrtc.so.12 nvrtc_stub -Wl,-soname,libnvrtc.so.12 \
    "-Wl,--version-script=$SRC/libnvrtc.map"

# broken/libtorch_cuda.so: NEEDs libcuda.so.1 (unused), nvrtc* left undefined.
compile "$CC" torch_cuda torch_cuda.c
so "$CC" out/broken/libtorch_cuda.so torch_cuda -Wl,-soname,libtorch_cuda.so \
    -Lout/driver -l:libcuda.so.1

# fixed/libtorch_cuda.so: same object, linked to the NVRTC stub, RUNPATH $ORIGIN.
so "$CC" out/fixed/libtorch_cuda.so torch_cuda -Wl,-soname,libtorch_cuda.so \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN' -Lout/fixed -l:libnvrtc.so.12

# ext/: extension-module look-alike with a private lib in $ORIGIN/lib.
compile "$CC" shim shim.c
so "$CC" out/ext/lib/libshim.so shim -Wl,-soname,libshim.so
compile "$CC" ext_module ext_module.c
so "$CC" out/ext/_C.cpython-311-x86_64-linux-gnu.so ext_module \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -Lout/ext/lib -lshim

# misc/libweak.so: weak undefined + strong undefined + resolved libc symbol.
compile "$CC" weak weak.c
so "$CC" out/misc/libweak.so weak -Wl,-soname,libweak.so

# misc/libnewglibc.so: getrandom@GLIBC_2.25, reallocarray@GLIBC_2.26.
compile "$CC" newglibc newglibc.c
so "$CC" out/misc/libnewglibc.so newglibc -Wl,-soname,libnewglibc.so

# misc/librelr.so: DT_RELR, hence a verneed on GLIBC_ABI_DT_RELR.
compile "$CC" relr relr.c
so "$CC" out/misc/librelr.so relr -Wl,-soname,librelr.so -Wl,-z,pack-relative-relocs

# misc/libleak.so (DT_RPATH with build-tree paths) and misc/libabs.so
# (DT_RUNPATH with an absolute vendor path).
compile "$CC" rpath rpath.c
so "$CC" out/misc/libleak.so rpath -Wl,-soname,libleak.so \
    -Wl,--disable-new-dtags,-rpath,'/home/builder/pytorch/build/lib:/usr/local/cuda/lib64/stubs:$ORIGIN'
so "$CC" out/misc/libabs.so rpath -Wl,-soname,libabs.so \
    -Wl,--enable-new-dtags,-rpath,/opt/vendor/lib

# misc/libverneed_mismatch.so: link against libnvrtc.so.12 (symbols bind
# there, so .gnu.version_r names libnvrtc.so.12) and against an
# auditwheel-style renamed copy (SONAME libnvrtc-1a2b3c4d.so.12, not shipped),
# then drop the libnvrtc.so.12 DT_NEEDED: DT_NEEDED now says
# libnvrtc-1a2b3c4d.so.12 while verneed still says libnvrtc.so.12.
mkdir -p "$WORK/renamed"
so "$CC" renamed/libnvrtc-1a2b3c4d.so.12 nvrtc_stub \
    -Wl,-soname,libnvrtc-1a2b3c4d.so.12 "-Wl,--version-script=$SRC/libnvrtc.map"
compile "$CC" verneed_mismatch verneed_mismatch.c
so "$CC" stage/libverneed_mismatch.so verneed_mismatch -Wl,-soname,libverneed_mismatch.so \
    -Lout/fixed -l:libnvrtc.so.12 -Lrenamed -l:libnvrtc-1a2b3c4d.so.12
"${PATCH[@]}" drop-needed "$WORK/stage/libverneed_mismatch.so" \
    "$OUT/misc/libverneed_mismatch.so" libnvrtc.so.12

# misc/libuses_driver.so: a legitimate user of cuInit / cuLaunchKernel.
compile "$CC" uses_driver uses_driver.c
so "$CC" out/misc/libuses_driver.so uses_driver -Wl,-soname,libuses_driver.so \
    -Lout/driver -l:libcuda.so.1

# misc/hello: PIE executable.
(cd "$WORK" && $CC "${CFLAGS[@]}" -fPIE -pie "${LDFLAGS[@]}" -Wl,--hash-style=gnu \
    -o out/misc/hello "$SRC/hello.c")

# misc/libnoshdr.so: libnewglibc.so without section headers.
"${PATCH[@]}" strip-shdrs "$OUT/misc/libnewglibc.so" "$OUT/misc/libnoshdr.so"

# misc/libsysvhash.so: DT_HASH only (no DT_GNU_HASH), no section headers.
so "$CC" stage/libsysvhash.so newglibc -Wl,-soname,libsysvhash.so -Wl,--hash-style=sysv
"${PATCH[@]}" strip-shdrs "$WORK/stage/libsysvhash.so" "$OUT/misc/libsysvhash.so"

# corrupt/: damaged inputs a reader must survive.
GOOD="$OUT/misc/libnewglibc.so"
TWO_VERNEED="$OUT/fixed/libtorch_cuda.so"   # verneed: libnvrtc.so.12 + libc.so.6
: > "$OUT/corrupt/empty.so"
"${PATCH[@]}" truncate "$GOOD" "$OUT/corrupt/truncated.so" 300
"${PATCH[@]}" badclass "$GOOD" "$OUT/corrupt/badclass.so"
"${PATCH[@]}" garbage "$OUT/corrupt/garbage_after_magic.so" 200
"${PATCH[@]}" lying-dynsym "$GOOD" "$OUT/corrupt/lying_dynsym.so"
"${PATCH[@]}" lying-phdr "$GOOD" "$OUT/corrupt/lying_phdr.so"
"${PATCH[@]}" lying-dynamic "$GOOD" "$OUT/corrupt/lying_dynamic.so"
"${PATCH[@]}" looping-verneed "$TWO_VERNEED" "$OUT/corrupt/looping_verneed.so"
"${PATCH[@]}" huge-verneednum "$TWO_VERNEED" "$OUT/corrupt/huge_verneednum.so"
printf 'This is not an ELF file.\nlinkaudit must report it, not crash.\n' \
    > "$OUT/corrupt/not_elf.txt"

# arch/: other ELF classes and byte orders (cross compilers).
# usable_cc CC...: true if CC exists and can link a shared library.
usable_cc() {
    command -v "${1}" >/dev/null 2>&1 || return 1
    (cd "$WORK" && printf 'int f(void){return 0;}\n' > probe.c &&
        "$@" -shared -fPIC -o probe.so probe.c) >/dev/null 2>&1
}

# cross_lib NAME PACKAGE "CC..." ["CC..."]: build arch/NAME.so with the first
# usable compiler, or leave the committed file alone.
cross_lib() {
    local name=$1 pkg=$2 cc=""
    shift 2
    for c in "$@"; do
        # shellcheck disable=SC2086
        if usable_cc $c; then cc=$c; break; fi
    done
    if [ -z "$cc" ]; then
        echo "SKIP arch/$name.so: no cross compiler (apt-get install $pkg); committed file kept"
        return 0
    fi
    echo "== arch/$name.so with $cc ($($cc -dumpmachine))"
    compile "$cc" "archlib-$name" archlib.c
    # 4 KiB pages: powerpc defaults to 64 KiB, which pads the file to 66 KB.
    so "$cc" "out/arch/$name.so" "archlib-$name" "-Wl,-soname,$name.so" \
        -Wl,-z,max-page-size=0x1000 -Wl,-z,common-page-size=0x1000
}

cross_lib lib32le gcc-i686-linux-gnu i686-linux-gnu-gcc "$CC -m32"
cross_lib lib64be gcc-s390x-linux-gnu s390x-linux-gnu-gcc
cross_lib lib32be gcc-powerpc-linux-gnu powerpc-linux-gnu-gcc

# Copy into place: ELF outputs 0755, corrupt inputs 0644.
(cd "$OUT" && find . -type f | LC_ALL=C sort) | while read -r rel; do
    rel=${rel#./}
    mkdir -p "$HERE/$(dirname "$rel")"
    case $rel in
        corrupt/*) mode=0644 ;;
        *) mode=0755 ;;
    esac
    install -m "$mode" "$OUT/$rel" "$HERE/$rel"
    echo "built sample_bins/$rel"
done
