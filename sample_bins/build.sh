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
#   native x86-64 : gcc g++ binutils libc6-dev python3  (g++: objects/ only)
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
mkdir -p "$OUT"/{driver,broken,fixed,ext/lib,ext_libc,misc,arch,corrupt} "$WORK/obj" "$WORK/stage"

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

# ext_libc/: extension module linked without libc (-nodefaultlibs): no DT_NEEDED, only
# libc's undefined symbols (strlen, memcpy, weak __cxa_finalize), as numpy's test modules.
compile "$CC" ext_libc ext_libc.c
so "$CC" out/ext_libc/_libconly.cpython-311-x86_64-linux-gnu.so ext_libc -nodefaultlibs

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

# misc/libisa_v3.so: libweak.so's object marked "x86 ISA needed: x86-64-v3" in its GNU property
# note (binutils >= 2.35: -z x86-64-v3), for rule isa-level.
so "$CC" out/misc/libisa_v3.so weak -Wl,-soname,libisa_v3.so -Wl,-z,x86-64-v3

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

# dlopen/: libdlopens.so keeps "libcuda.so" and "libnvrtc.so.12" in .rodata
# for dlopen(); beside it only an auditwheel-style renamed copy of the NVRTC
# stub, libnvrtc-1a2b3c4d.so.12 (so the dlopen of libnvrtc.so.12 finds nothing).
mkdir -p "$OUT/dlopen"
compile "$CC" dlopens dlopens.c
so "$CC" out/dlopen/libdlopens.so dlopens -Wl,-soname,libdlopens.so \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN' -ldl
cp "$WORK/renamed/libnvrtc-1a2b3c4d.so.12" "$OUT/dlopen/libnvrtc-1a2b3c4d.so.12"

# misc/libexecstack.so: an assembly object without .note.GNU-stack, so the
# linker marks the stack executable (PT_GNU_STACK RWE).
compile "$CC" execstack execstack.s
so "$CC" out/misc/libexecstack.so execstack -Wl,-soname,libexecstack.so -Wl,--no-warn-execstack

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

# arch/libtextrel32.so: i386 code built without -fPIC: DT_TEXTREL.
for c in i686-linux-gnu-gcc "$CC -m32"; do
    # shellcheck disable=SC2086
    if usable_cc $c; then
        compile "$c" textrel32 textrel.c -fno-PIC
        so "$c" out/arch/libtextrel32.so textrel32 -Wl,-soname,libtextrel32.so \
            -Wl,-z,max-page-size=0x1000 -Wl,-z,common-page-size=0x1000
        break
    fi
done
cross_lib lib64be gcc-s390x-linux-gnu s390x-linux-gnu-gcc
cross_lib lib32be gcc-powerpc-linux-gnu powerpc-linux-gnu-gcc

# =============================================================================
# loader/: directory trees that separate a faithful emulation of glibc's ld.so
# (dl-load.c search order, dl-lookup.c binding, dl-version.c version checks)
# from a naive one.  One directory per scenario, audited as a whole; the
# expected loader outcome of each is in README.md ("Loader scenarios").
# Sources in src/loader/.  Only $ORIGIN-relative RPATH/RUNPATH.  Same flags as
# above; object names start with "ld_" so they never clash with the ones above.
# -rpath-link / --allow-shlib-undefined only help ld check the link; they
# leave nothing in the output.
# =============================================================================
echo "== loader/ scenarios"
L=out/loader            # relative to $WORK, like every path given to so()

# ldc NAME SRC [cc args]: compile src/loader/SRC -> obj/ld_NAME.o
ldc() { local name=$1 src=$2; shift 2; compile "$CC" "ld_$name" "loader/$src" "$@"; }
# ldexe OUTPATH NAME [link args]: a PIE executable from obj/ld_NAME.o
ldexe() {
    local out=$1 obj=$2
    shift 2
    (cd "$WORK" && mkdir -p "$(dirname "$out")" && $CC -fPIE -pie "${CFLAGS[@]}" "${LDFLAGS[@]}" \
        -Wl,--hash-style=gnu -o "$out" "obj/ld_$obj.o" "$@")
}
# ldso OUTPATH NAME [link args]: a shared library from obj/ld_NAME.o
ldso() {
    local out=$1 obj=$2
    shift 2
    (cd "$WORK" && mkdir -p "$(dirname "$out")")
    so "$CC" "$out" "ld_$obj" "$@"
}
RUNPATH=-Wl,--enable-new-dtags,-rpath   # append ,'$ORIGIN/...'
RPATH=-Wl,--disable-new-dtags,-rpath

for n in leaf mid dep root_dep dup_one dup_two first second prov uses_new unversioned \
         half root_unresolved used notused root_unused dupver_a dupver_b root_global helper pymod; do
    ldc "$n" "$n.c"
done
ldc prov_old prov.c -DPROV_OLD
for n in app_mid app_leaf app_soname app_new app_old; do
    ldc "$n" "$n.c" -fPIE
done

# 1. runpath_not_inherited: app RUNPATH $ORIGIN/lib -> lib/libmid.so (no
#    paths) -> libleaf.so: not found (RUNPATH serves only app's own NEEDED).
S=$L/runpath_not_inherited
ldso $S/lib/libleaf.so leaf -Wl,-soname,libleaf.so
ldso $S/lib/libmid.so mid -Wl,-soname,libmid.so -L$S/lib -l:libleaf.so
ldexe $S/app app_mid "$RUNPATH,\$ORIGIN/lib" -L$S/lib -l:libmid.so -Wl,-rpath-link,$S/lib

# 2. rpath_inherited: the same tree, app has DT_RPATH: libleaf.so is found.
S=$L/rpath_inherited
ldso $S/lib/libleaf.so leaf -Wl,-soname,libleaf.so
ldso $S/lib/libmid.so mid -Wl,-soname,libmid.so -L$S/lib -l:libleaf.so
ldexe $S/app app_mid "$RPATH,\$ORIGIN/lib" -L$S/lib -l:libmid.so -Wl,-rpath-link,$S/lib

# 3. rpath_cut_by_runpath: app RPATH $ORIGIN/lib; libmid.so has RUNPATH
#    $ORIGIN/empty, so no RPATH is searched for its libleaf.so: not found.
S=$L/rpath_cut_by_runpath
ldso $S/lib/libleaf.so leaf -Wl,-soname,libleaf.so
ldso $S/lib/libmid.so mid -Wl,-soname,libmid.so "$RUNPATH,\$ORIGIN/empty" -L$S/lib -l:libleaf.so
ldexe $S/app app_mid "$RPATH,\$ORIGIN/lib" -L$S/lib -l:libmid.so -Wl,-rpath-link,$S/lib
mkdir -p "$WORK/$S/lib/empty"
printf '%s\n' "Deliberately empty directory (no libraries): the target of lib/libmid.so's" \
    'DT_RUNPATH $ORIGIN/empty.  This file only makes git keep the directory.' \
    > "$WORK/$S/lib/empty/README.md"

# 3b. ancestor_runpath: app has DT_RUNPATH $ORIGIN/mid and DT_RPATH
#     $ORIGIN/lib.  GNU ld writes one or the other, so app is linked with
#     RUNPATH plus --audit '$ORIGIN/lib' and the DT_AUDIT entry is retagged
#     DT_RPATH.  ld.so drops an object's RPATH when it has a RUNPATH, also for
#     its descendants: mid/libmid.so's libleaf.so is not found.
S=$L/ancestor_runpath
ldso $S/lib/libleaf.so leaf -Wl,-soname,libleaf.so
ldso $S/mid/libmid.so mid -Wl,-soname,libmid.so -L$S/lib -l:libleaf.so
ldexe stage/ancestor_runpath_app app_mid "$RUNPATH,\$ORIGIN/mid" "-Wl,--audit,\$ORIGIN/lib" \
    -L$S/mid -l:libmid.so -Wl,-rpath-link,$S/lib
"${PATCH[@]}" retag "$WORK/stage/ancestor_runpath_app" "$WORK/$S/app" AUDIT RPATH

# 4. origin_symlink: pkg/real/libroot.so has RUNPATH $ORIGIN/../deps; the
#    symlink link/libroot.so -> ../pkg/real/libroot.so is made at install
#    time (below).  Loaded as link/libroot.so, $ORIGIN is <scenario>/link.
S=$L/origin_symlink
ldso $S/deps/libdep.so dep -Wl,-soname,libdep.so
ldso $S/pkg/real/libroot.so root_dep -Wl,-soname,libroot.so "$RUNPATH,\$ORIGIN/../deps" \
    -L$S/deps -l:libdep.so

# 5. soname_reuse: two different libdup.so.1; the first one loaded (by
#    libfirst.so's need) is reused for libsecond.so's need: dup_two unresolved.
S=$L/soname_reuse
ldso $S/lib/one/libdup.so.1 dup_one -Wl,-soname,libdup.so.1
ldso $S/lib/two/libdup.so.1 dup_two -Wl,-soname,libdup.so.1
ldso $S/lib/libfirst.so first -Wl,-soname,libfirst.so "$RUNPATH,\$ORIGIN/one" -L$S/lib/one -l:libdup.so.1
ldso $S/lib/libsecond.so second -Wl,-soname,libsecond.so "$RUNPATH,\$ORIGIN/two" -L$S/lib/two -l:libdup.so.1
ldexe $S/app app_soname "$RUNPATH,\$ORIGIN/lib" -L$S/lib -l:libfirst.so -l:libsecond.so \
    -Wl,--allow-shlib-undefined

# 6./7. wrong_class and not_elf_candidate: app RUNPATH $ORIGIN/lib32:$ORIGIN/lib64.
for S in $L/wrong_class $L/not_elf_candidate; do
    ldso $S/lib64/libleaf.so leaf -Wl,-soname,libleaf.so
    ldexe $S/app app_leaf "$RUNPATH,\$ORIGIN/lib32:\$ORIGIN/lib64" -L$S/lib64 -l:libleaf.so
done
# wrong_class/lib32/libleaf.so: the i386 build (skipped, committed file kept,
# without an i386 compiler).
cc32=""
for c in i686-linux-gnu-gcc "$CC -m32"; do
    # shellcheck disable=SC2086
    if usable_cc $c; then cc32=$c; break; fi
done
if [ -z "$cc32" ]; then
    echo "SKIP loader/wrong_class/lib32/libleaf.so: no i386 compiler (apt-get install gcc-i686-linux-gnu); committed file kept"
else
    echo "== loader/wrong_class/lib32/libleaf.so with $cc32"
    compile "$cc32" ld_leaf32 loader/leaf.c
    mkdir -p "$WORK/$L/wrong_class/lib32"
    so "$cc32" $L/wrong_class/lib32/libleaf.so ld_leaf32 -Wl,-soname,libleaf.so \
        -Wl,-z,max-page-size=0x1000 -Wl,-z,common-page-size=0x1000
fi
# not_elf_candidate/lib32/libleaf.so: text, at least 64 bytes (an ELF64
# header's size; a shorter file gets "file too short" instead).
mkdir -p "$WORK/$L/not_elf_candidate/lib32"
printf '%s\n' 'This is not an ELF file, although it is named libleaf.so.' \
    'ld.so stops at it with "invalid ELF header" and does not go on to lib64/.' \
    > "$WORK/$L/not_elf_candidate/lib32/libleaf.so"

# 8. versions: libprov.so three ways (full in new/, old in old/, unversioned
#    only for linking libunversioned.so); consumers in lib/ with RUNPATH
#    $ORIGIN/../new; app_new works, app_old loads old/libprov.so first.
S=$L/versions
mkdir -p "$WORK/stage/unversioned"
ldso $S/new/libprov.so prov -Wl,-soname,libprov.so "-Wl,--version-script=$SRC/loader/prov.map"
ldso $S/old/libprov.so prov_old -Wl,-soname,libprov.so "-Wl,--version-script=$SRC/loader/prov_old.map"
ldso stage/unversioned/libprov.so prov -Wl,-soname,libprov.so
ldso $S/lib/libuses_new.so uses_new -Wl,-soname,libuses_new.so "$RUNPATH,\$ORIGIN/../new" \
    -L$S/new -l:libprov.so
ldso $S/lib/libunversioned.so unversioned -Wl,-soname,libunversioned.so "$RUNPATH,\$ORIGIN/../new" \
    -Lstage/unversioned -l:libprov.so
ldexe $S/app_new app_new "$RUNPATH,\$ORIGIN/lib" -L$S/lib -l:libuses_new.so -l:libunversioned.so \
    -Wl,-rpath-link,$S/new
ldexe $S/app_old app_old "$RUNPATH,\$ORIGIN/old:\$ORIGIN/lib" -L$S/old -l:libprov.so \
    -L$S/lib -l:libuses_new.so -Wl,--allow-shlib-undefined

# 9. unresolved: half_missing is defined nowhere; optional_feature is weak.
S=$L/unresolved
ldso $S/libhalf.so half -Wl,-soname,libhalf.so
ldso $S/libroot.so root_unresolved -Wl,-soname,libroot.so "$RUNPATH,\$ORIGIN" -L$S -l:libhalf.so

# 10. unused_needed: libnotused.so is NEEDED (--no-as-needed) but unused.
S=$L/unused_needed
ldso $S/libused.so used -Wl,-soname,libused.so
ldso $S/libnotused.so notused -Wl,-soname,libnotused.so
ldso $S/libroot.so root_unused -Wl,-soname,libroot.so "$RUNPATH,\$ORIGIN" -L$S -l:libused.so -l:libnotused.so

# 11. global_preload: a/libdup.so.1 (DUP_1) and b/libdup.so.1 (DUP_1, DUP_2);
#     libroot.so needs dup_new@DUP_2 and finds b/ through RUNPATH $ORIGIN/b.
S=$L/global_preload
ldso $S/a/libdup.so.1 dupver_a -Wl,-soname,libdup.so.1 "-Wl,--version-script=$SRC/loader/dupver_a.map"
ldso $S/b/libdup.so.1 dupver_b -Wl,-soname,libdup.so.1 "-Wl,--version-script=$SRC/loader/dupver_b.map"
ldso $S/libroot.so root_global -Wl,-soname,libroot.so "$RUNPATH,\$ORIGIN/b" -L$S/b -l:libdup.so.1

# 12. pyext: an extension module whose Py* references only the interpreter
#     provides; its private helper in lib/ (RUNPATH $ORIGIN/lib).  No SONAME.
S=$L/pyext
ldso $S/lib/libhelper.so helper -Wl,-soname,libhelper.so
ldso $S/mod.cpython-311-x86_64-linux-gnu.so pymod "$RUNPATH,\$ORIGIN/lib" -L$S/lib -l:libhelper.so

# ============================================================ end of loader/

# =============================================================================
# objects/: relocatable objects (.o), static archives (.a), two shared
# libraries and link lines (link_*.rsp) for duplicate-definition checks: when
# GNU ld reports "multiple definition" and when it does not.  One directory per
# case; the verified outcome of every .rsp is in README.md ("Objects and
# archives").  Sources in src/objects/<case>/.  Same compiler flags as above
# (CFLAGS: -O1 -g0 -fno-ident -fPIC and the prefix maps); .o files keep their
# .symtab (only the two .so files are linked, with LDFLAGS, so stripped).
# Archives use ar's deterministic "D" modifier (member date 0, uid/gid 0, mode
# 644).  Object names start with "ob_" in $WORK/obj, so they never clash with
# the ones above.  Nothing here is linked into a program by this script.
# =============================================================================
echo "== objects/"
CXX=${CXX:-g++}
AR=${AR:-ar}
OB=out/objects          # relative to $WORK
STG=stage/objects       # archive members that are not shipped as loose files
for c in strong_pair archive_one archive_two cpp_comdat common stacked shared_static lto thin longnames; do
    mkdir -p "$WORK/$OB/$c" "$WORK/$STG/$c"
done

# obc CC CASE/SRCFILE OUTPATH [cc args]: compile src/objects/CASE/SRCFILE to
# OUTPATH (relative to $WORK).
obc() {
    local cc=$1 src=$2 out=$3
    shift 3
    (cd "$WORK" && $cc "${CFLAGS[@]}" "$@" -c "$SRC/objects/$src" -o "$out")
}
# arch_ DIR ARCHIVE MEMBER...: ar rcsD, run inside DIR (relative to $WORK) so
# the member names are plain file names; ARCHIVE is relative to $WORK.
arch_() {
    local dir=$1 archive=$2
    shift 2
    (cd "$WORK/$dir" && $AR rcsD "$WORK/$archive" "$@")
}
# rsp CASE NAME ARG...: objects/CASE/link_NAME.rsp, the gcc link arguments on
# one line, relative to objects/CASE/ (gcc -o /dev/null @link_NAME.rsp).
rsp() {
    local c=$1 n=$2
    shift 2
    printf '%s\n' "$*" > "$WORK/$OB/$c/link_$n.rsp"
}

# 1. strong_pair: a.o and b.o both define strong dup_fn and dup_counter.
S=strong_pair
for n in a b main; do obc "$CC" $S/$n.c $OB/$S/$n.o; done
rsp $S main_a_b main.o a.o b.o          # fails: multiple definition
rsp $S main_a main.o a.o                # links

# 2. archive_one: libone.a = first.o (member_fn) + second.o (member_fn,
#    only_second).  ld pulls a member only for a symbol still undefined.
S=archive_one
for n in first second; do obc "$CC" $S/$n.c $STG/$S/$n.o; done
arch_ $STG/$S $OB/$S/libone.a first.o second.o
for n in main_first main_both; do obc "$CC" $S/$n.c $OB/$S/$n.o; done
rsp $S main_first main_first.o libone.a # links: only first.o is pulled
rsp $S main_both main_both.o libone.a   # fails: second.o is pulled too

# 3. archive_two: libx.a = x.o (cross_fn, x_only), liby.a = y.o (cross_fn,
#    y_only).
S=archive_two
obc "$CC" $S/x.c $STG/$S/x.o
obc "$CC" $S/y.c $STG/$S/y.o
arch_ $STG/$S $OB/$S/libx.a x.o
arch_ $STG/$S $OB/$S/liby.a y.o
for n in main_x main_xy; do obc "$CC" $S/$n.c $OB/$S/$n.o; done
rsp $S main_x main_x.o libx.a liby.a    # links: y.o is never pulled
rsp $S main_xy main_xy.o libx.a liby.a  # fails: x.o and y.o both pulled

# 4. cpp_comdat: the explicit specialization twice<int> is strong in spec_a.o
#    and spec_b.o; helper and twice<long> are weak COMDAT groups (fine).
S=cpp_comdat
for n in spec_a spec_b main_cpp; do obc "$CXX" $S/$n.cpp $OB/$S/$n.o; done
rsp $S spec_a main_cpp.o spec_a.o                # links
rsp $S spec_a_b main_cpp.o spec_a.o spec_b.o     # fails: only twice<int>

# 5. common: the tentative definition "int shared_total;" in counter.h.
S=common
for n in c1 c2; do
    obc "$CC" $S/$n.c $OB/$S/${n}_common.o -fcommon      # COMMON symbol
    obc "$CC" $S/$n.c $OB/$S/${n}_nocommon.o -fno-common # strong .bss
done
obc "$CC" $S/main_common.c $OB/$S/main_common.o
rsp $S common main_common.o c1_common.o c2_common.o       # links (merged)
rsp $S nocommon main_common.o c1_nocommon.o c2_nocommon.o # fails
rsp $S mixed main_common.o c1_common.o c2_nocommon.o      # links (COMMON yields)

# 6. stacked: one source compiled under the two names a stale PyTorch-style
#    codegen tree produces; plus that tree's three source files (text only).
S=stacked
obc "$CXX" $S/activation_kernel.cpp "$OB/$S/Activation.cpp.DEFAULT.cpp.o"
obc "$CXX" $S/activation_kernel.cpp "$OB/$S/Activation.cpp.DEFAULT.cpp.DEFAULT.cpp.o"
obc "$CXX" $S/main_stacked.cpp $OB/$S/main_stacked.o
rsp $S default main_stacked.o Activation.cpp.DEFAULT.cpp.o       # links
rsp $S stacked main_stacked.o Activation.cpp.DEFAULT.cpp.o \
    Activation.cpp.DEFAULT.cpp.DEFAULT.cpp.o                     # fails
T=$WORK/$OB/$S/src_tree/aten/native/cpu
mkdir -p "$T"
printf '%s\n' '// aten/native/cpu/Activation.cpp: the real kernel source.' \
    'namespace at { namespace native {' \
    'void activation_kernel_DEFAULT(float* data, int n) {' \
    '  for (int i = 0; i < n; ++i) if (data[i] < 0.0f) data[i] = 0.0f;' \
    '}' '} }' > "$T/Activation.cpp"
printf '%s\n' '// Generated by the CPU-capability codegen (DEFAULT) from Activation.cpp.' \
    '#include "Activation.cpp"' > "$T/Activation.cpp.DEFAULT.cpp"
printf '%s\n' '// Generated by the CPU-capability codegen (DEFAULT) from Activation.cpp.DEFAULT.cpp:' \
    '// a stale generated file was taken for a kernel source and wrapped again.' \
    '#include "Activation.cpp.DEFAULT.cpp"' > "$T/Activation.cpp.DEFAULT.cpp.DEFAULT.cpp"

# 7. shared_static: libcommon_util.a (util.o) linked whole into libfirst.so
#    and into libsecond.so; both export util_fn and util_version.
S=shared_static
obc "$CC" $S/util.c $STG/$S/util.o
arch_ $STG/$S $OB/$S/libcommon_util.a util.o
obc "$CC" $S/first.c obj/ob_first.o
obc "$CC" $S/second.c obj/ob_second.o
for n in first second; do
    so "$CC" $OB/$S/lib$n.so ob_$n -Wl,-soname,lib$n.so \
        -Wl,--whole-archive $OB/$S/libcommon_util.a -Wl,--no-whole-archive
done
obc "$CC" $S/main_shared.c $OB/$S/main_shared.o
rsp $S two_libs main_shared.o libfirst.so libsecond.so   # links (silently)

# 8. lto: a slim LTO object.  GCC 12 streams the main file name as given and,
#    when the (remapped) location file name is relative, the unmapped working
#    directory; the section names get a random suffix.  So: a relative
#    "./slim.c" from its own directory, "./" mapped to an absolute name, and a
#    fixed -frandom-seed.
(cd "$SRC/objects/lto" && $CC "${CFLAGS[@]}" -flto -frandom-seed=slim \
    -ffile-prefix-map=./=/src/objects/lto/ -c ./slim.c -o "$WORK/$OB/lto/slim.o")

# 9. thin: thin archive (ar T) whose members thin_a.o, thin_b.o lie beside it.
#    longnames: member names over 15 characters, so GNU ar writes a "//" table.
S=thin
for n in thin_a thin_b; do obc "$CC" $S/$n.c $OB/$S/$n.o; done
(cd "$WORK/$OB/$S" && $AR rcsDT libthin.a thin_a.o thin_b.o)
S=longnames
obc "$CC" $S/long_one.c $STG/$S/a_very_long_member_name_one.o
obc "$CC" $S/long_two.c $STG/$S/a_very_long_member_name_two.o
arch_ $STG/$S $OB/$S/liblong.a a_very_long_member_name_one.o a_very_long_member_name_two.o

# =========================================================== end of objects/

# Copy into place: ELF outputs 0755, corrupt inputs 0644; under objects/
# only the shared libraries are 0755 (.o, .a, .rsp and the text tree 0644).
(cd "$OUT" && find . -type f | LC_ALL=C sort) | while read -r rel; do
    rel=${rel#./}
    mkdir -p "$HERE/$(dirname "$rel")"
    case $rel in
        corrupt/*) mode=0644 ;;
        loader/*.md | loader/not_elf_candidate/lib32/*) mode=0644 ;;
        objects/*.so) mode=0755 ;;
        objects/*) mode=0644 ;;
        *) mode=0755 ;;
    esac
    install -m "$mode" "$OUT/$rel" "$HERE/$rel"
    echo "built sample_bins/$rel"
done

# loader/origin_symlink/link/libroot.so: a relative symlink to the real file
# (find -type f above does not copy links).
mkdir -p "$HERE/loader/origin_symlink/link"
ln -sfn ../pkg/real/libroot.so "$HERE/loader/origin_symlink/link/libroot.so"
echo "linked sample_bins/loader/origin_symlink/link/libroot.so -> ../pkg/real/libroot.so"
