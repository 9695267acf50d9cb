#!/usr/bin/env bash
# Rebuild the Mach-O fixtures under sample_bins/macho/ from sample_bins/src/macho/.
#
#   bash sample_bins/build_macho.sh
#
# clang -target {x86_64,arm64}-apple-macos11 -fuse-ld=lld (Debian bookworm: clang lld llvm; lld-14
# provides ld64.lld), -nostdlib against a hand-written libSystem.tbd stub (exporting
# dyld_stub_binder), llvm-lipo for the universal file.  Deterministic; nothing built is run.
set -euo pipefail
export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC ZERO_AR_DATE=1
umask 022
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/src/macho"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkaudit-macho.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LIPO=$(command -v llvm-lipo || command -v llvm-lipo-14 || true)
if ! command -v clang >/dev/null || [ -z "$LIPO" ]; then
    echo "skipped: needs clang, lld (ld64.lld) and llvm-lipo; committed files left as they are"
    exit 0
fi
mkdir -p "$WORK"/out/{broken,fixed,misc}
cd "$WORK"
CF=(-nostdlib -shared -fuse-ld=lld -O1 -g0 "-ffile-prefix-map=$SRC=src/macho")
cc() { local arch=$1; shift; clang -target "$arch-apple-macos11" "${CF[@]}" "$@" "$SRC/libSystem.tbd"; }

# fixed/: libnvrtc.12.dylib and libtorch_cuda.dylib linking it through @rpath, LC_RPATH @loader_path.
cc x86_64 -o out/fixed/libnvrtc.12.dylib -install_name @rpath/libnvrtc.12.dylib "$SRC/nvrtc_stub.c"
cc x86_64 -o out/fixed/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    out/fixed/libnvrtc.12.dylib -Wl,-rpath,@loader_path
# broken/: the same code, NVRTC not linked, its symbols left to flat lookup.
cc x86_64 -o out/broken/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    -Wl,-undefined,dynamic_lookup
# misc/libleaky.dylib: a build machine's absolute LC_RPATH, and @loader_path twice (dyld 15.4 rejects it).
cc arm64 -o out/misc/libleaky.dylib -install_name /Users/runner/work/pytorch/build/lib/libleaky.dylib \
    "$SRC/nvrtc_stub.c" -Wl,-rpath,/Users/runner/work/pytorch/build/lib -Wl,-rpath,@loader_path \
    -Wl,-rpath,@loader_path
# misc/universal.dylib: x86_64 and arm64 slices of the fixed libtorch_cuda.
cc arm64 -o arm64.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    out/fixed/libnvrtc.12.dylib -Wl,-rpath,@loader_path
"$LIPO" -create out/fixed/libtorch_cuda.dylib arm64.dylib -output out/misc/universal.dylib

mkdir -p "$HERE/macho"
cp -r "$WORK"/out/* "$HERE/macho/"
find "$HERE/macho" -name '*.dylib' -exec chmod 0644 {} +
echo "built: $(cd "$HERE" && find macho -name '*.dylib' | sort | tr '\n' ' ')"
