#!/usr/bin/env bash
# Rebuild the PE fixtures under sample_bins/pe/ from sample_bins/src/pe/.
#
#   bash sample_bins/build_pe.sh
#
# Deterministic (-Wl,--no-insert-timestamp, -nostdlib: no C runtime, 4 KB DLLs);
# nothing that is built is executed.  Debian packages (bookworm):
#   gcc-mingw-w64-x86-64 (x86_64-w64-mingw32-gcc, -dlltool)  every DLL but delay_driver.dll
#   clang lld llvm                                            delay_driver.dll (GNU ld's delay
#       import libraries leave the delay-import directory empty; lld writes a real one)
set -euo pipefail
export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/src/pe"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkaudit-pe.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK"/out/{broken,fixed,driver,imports,machine} "$WORK"/out/pyext/{python312,python3,python313t,python312_d}

CC=x86_64-w64-mingw32-gcc
DLLTOOL=x86_64-w64-mingw32-dlltool
if ! command -v "$CC" >/dev/null; then
    echo "skipped: $CC not found (apt install gcc-mingw-w64-x86-64); committed files left as they are"
    exit 0
fi
CFLAGS=(-O1 -g0 -fno-ident -nostdlib -shared -Wl,--no-insert-timestamp -Wl,-e,DllMainCRTStartup -s
        "-ffile-prefix-map=$SRC=src/pe")

implib() { (cd "$WORK" && "$DLLTOOL" -d "$SRC/$1.def" -l "lib$2.a"); }
dll() {  # dll OUT SOURCES... [-- link args]
    local out=$1
    shift
    (cd "$WORK" && "$CC" "${CFLAGS[@]}" -o "out/$out" "$SRC/entry.c" "$@")
}

implib nvrtc nvrtc
implib nvcuda_wrong nvcuda_wrong
implib nvcuda nvcuda
implib helper_claims helper_claims

# fixed/nvrtc64_120_0.dll: the NVRTC stand-in.   fixed/torch_cuda.dll: imports it.
dll fixed/nvrtc64_120_0.dll "$SRC/nvrtc_stub.c"
dll fixed/torch_cuda.dll "$SRC/torch_cuda.c" -L. -lnvrtc
# broken/torch_cuda.dll: the same code, linked with an import library naming nvcuda.dll.
dll broken/torch_cuda.dll "$SRC/torch_cuda.c" -L. -lnvcuda_wrong
# driver/plain_driver.dll: a plain import of nvcuda.dll (cuInit, cuDeviceGetCount).
dll driver/plain_driver.dll "$SRC/uses_driver.c" -L. -lnvcuda
# imports/helper.dll: exports present_fn and a forwarder to nvrtc64_120_0.nvrtcGetPTX;
# imports/app.dll: imports present_fn, forwarded_fn and absent_fn (not exported).
dll imports/helper.dll "$SRC/helper.c" "$SRC/helper.def"
dll imports/app.dll "$SRC/app.c" -L. -lhelper_claims
cp "$WORK/out/fixed/nvrtc64_120_0.dll" "$WORK/out/imports/"
# imports/app.exe: the same imports in an executable (IMAGE_FILE_DLL clear): Windows' standard search
# order, PATH included.  machine/app.exe beside machine/helper.dll, an i386 build (clang + lld, below).
EXEFLAGS=()
for flag in "${CFLAGS[@]}"; do [ "$flag" = -shared ] || EXEFLAGS+=("$flag"); done
(cd "$WORK" && "$CC" "${EXEFLAGS[@]}" -o out/imports/app.exe "$SRC/entry.c" "$SRC/app.c" -L. -lhelper_claims)
cp "$WORK/out/imports/app.exe" "$WORK/out/machine/"

# pyext/DLL/_ext.pyd: an extension module importing PyLong_FromLong from the interpreter's DLL DLL.dll
# (the import library written here: LIBRARY is the only line that differs); the test names and
# packs each copy as the case needs (_ext.cp311-win_amd64.pyd, a cp312-abi3 wheel, ...).
for py in python312 python3 python313t python312_d; do
    printf 'LIBRARY %s.dll\nEXPORTS\n    PyLong_FromLong\n' "$py" >"$WORK/$py.def"
    (cd "$WORK" && "$DLLTOOL" -d "$py.def" -l "lib$py.a")
    dll "pyext/$py/_ext.pyd" "$SRC/pyext.c" -L. "-l$py"
done

# driver/delay_driver.dll: the same calls, nvcuda.dll delay-loaded (clang + lld).
if command -v clang >/dev/null && command -v ld.lld >/dev/null && command -v llvm-dlltool >/dev/null; then
    (cd "$WORK" && llvm-dlltool -m i386:x86-64 -d "$SRC/nvcuda.def" -l libnvcuda_llvm.a &&
     clang --target=x86_64-w64-mingw32 -fuse-ld=lld -O1 -g0 -nostdlib -shared -s \
        -Wl,--no-insert-timestamp -Wl,-e,DllMainCRTStartup -Wl,--delayload=nvcuda.dll \
        "-ffile-prefix-map=$SRC=src/pe" -o out/driver/delay_driver.dll \
        "$SRC/entry.c" "$SRC/uses_driver.c" libnvcuda_llvm.a)
else
    echo "skipped: driver/delay_driver.dll (needs clang, lld, llvm-dlltool)"
    rm -f "$WORK/out/driver/delay_driver.dll"
fi

# machine/helper.dll: helper.dll's present_fn for i386 (IMAGE_FILE_MACHINE_I386): the x86-64 app.exe
# beside it cannot use it ("%1 is not a valid Win32 application").
if command -v clang >/dev/null && command -v ld.lld >/dev/null; then
    (cd "$WORK" && clang --target=i686-w64-mingw32 -fuse-ld=lld -O1 -g0 -nostdlib -shared -s \
        -Wl,--no-insert-timestamp -Wl,-e,DllMainCRTStartup@12 "-ffile-prefix-map=$SRC=src/pe" \
        -o out/machine/helper.dll "$SRC/entry.c" "$SRC/helper.c")
else
    echo "skipped: machine/helper.dll (needs clang, lld)"
    rm -rf "$WORK/out/machine"
fi

mkdir -p "$HERE/pe"
cp -r "$WORK"/out/* "$HERE/pe/"
find "$HERE/pe" -type f -exec chmod 0644 {} +
echo "built: $(cd "$HERE" && find pe -type f | sort | tr '\n' ' ')"
