#!/usr/bin/env bash
# Rebuild the Mach-O fixtures under sample_bins/macho/ from sample_bins/src/macho/.
#
#   bash sample_bins/build_macho.sh
#
# clang -target {x86_64,arm64}-apple-macos11 -fuse-ld=lld (Debian bookworm: clang lld llvm; lld-14
# provides ld64.lld), -nostdlib against a hand-written libSystem.tbd stub (exporting
# dyld_stub_binder), llvm-lipo for the universal file; chained/ needs ld64.lld-16 (apt-get install
# lld-16: chained fixups and LC_DYLD_EXPORTS_TRIE, -target arm64-apple-macos12) and llvm-strip.
# Deterministic; nothing built is run.
set -euo pipefail
export SOURCE_DATE_EPOCH=0 LC_ALL=C TZ=UTC ZERO_AR_DATE=1
umask 022
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC="$HERE/src/macho"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/linkaudit-macho.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
LIPO=$(command -v llvm-lipo || command -v llvm-lipo-14 || true)
LLD16=$(command -v ld64.lld-16 || true)
STRIP=$(command -v llvm-strip-16 || command -v llvm-strip || command -v llvm-strip-14 || true)
if ! command -v clang >/dev/null || [ -z "$LIPO" ]; then
    echo "skipped: needs clang, lld (ld64.lld) and llvm-lipo; committed files left as they are"
    exit 0
fi
mkdir -p "$WORK"/out/{broken,fixed,misc,chained} "$WORK"/out/misc/{flat_lookup,flat_namespace,weak,reexport} \
    "$WORK"/out/misc/{missing_symbol,chain/torch/lib,exe/bin,exe/lib} "$WORK"/out/sdk0 "$WORK"/sdk/usr/lib
cd "$WORK"
cp "$SRC/libSystem.tbd" sdk/usr/lib/libSystem.B.tbd  # -flat_namespace looks up libSystem by its install name
CF=(-nostdlib -shared -fuse-ld=lld -O1 -g0 "-ffile-prefix-map=$SRC=src/macho")
cc() { local arch=$1; shift; clang -target "$arch-apple-macos11" "${CF[@]}" "$@" "$SRC/libSystem.tbd"; }

# fixed/: libnvrtc.12.dylib and libtorch_cuda.dylib linking it through @rpath, LC_RPATH @loader_path.
cc x86_64 -o out/fixed/libnvrtc.12.dylib -install_name @rpath/libnvrtc.12.dylib "$SRC/nvrtc_stub.c"
cc x86_64 -o out/fixed/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    out/fixed/libnvrtc.12.dylib -Wl,-rpath,@loader_path
# broken/: the same code linked against a stub claiming the CUDA driver exports nvrtc* (the seed bug):
# its imports bind, two-level, to @rpath/libcuda.dylib.
cc x86_64 -o out/broken/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    "$SRC/libcuda_wrong.tbd" -Wl,-rpath,@loader_path
# misc/flat_lookup/: NVRTC not linked, its symbols left to flat lookup (-undefined dynamic_lookup).
cc x86_64 -o out/misc/flat_lookup/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    -Wl,-undefined,dynamic_lookup
# misc/flat_namespace/: linked against NVRTC but -flat_namespace (no MH_TWOLEVEL: imports name no dylib).
cp out/fixed/libnvrtc.12.dylib out/misc/flat_namespace/
cc x86_64 -o out/misc/flat_namespace/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib \
    "$SRC/torch_cuda.c" out/fixed/libnvrtc.12.dylib -Wl,-flat_namespace -Wl,-syslibroot,"$WORK/sdk" \
    -Wl,-rpath,@loader_path
# misc/weak/: NVRTC as LC_LOAD_WEAK_DYLIB and not shipped: dyld goes on without it.
cc x86_64 -o out/misc/weak/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    -Wl,-weak_library,out/fixed/libnvrtc.12.dylib -Wl,-rpath,@loader_path
# misc/reexport/: libtorch_cuda imports nvrtc* from an umbrella dylib that re-exports libnvrtc.12.dylib.
cp out/fixed/libnvrtc.12.dylib out/misc/reexport/
# (libSystem first: lld also writes a plain LC_LOAD_DYLIB for the re-exported dylib, and with libSystem
# last it numbers dyld_stub_binder's ordinal as if that load were not there.)
cc x86_64 -o out/misc/reexport/libcuda_umbrella.dylib -install_name @rpath/libcuda_umbrella.dylib \
    "$SRC/libSystem.tbd" "$SRC/umbrella.c" -Wl,-reexport_library,out/misc/reexport/libnvrtc.12.dylib \
    -Wl,-rpath,@loader_path
cc x86_64 -o out/misc/reexport/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    "$SRC/libcuda_umbrella.tbd" -Wl,-rpath,@loader_path
# misc/missing_symbol/: linked against the full NVRTC, shipped with an older one lacking nvrtcCompileProgram.
cc x86_64 -o out/misc/missing_symbol/libnvrtc.12.dylib -install_name @rpath/libnvrtc.12.dylib "$SRC/nvrtc_old.c"
cp out/fixed/libtorch_cuda.dylib out/misc/missing_symbol/
# misc/chain/torch/: _C.so (a bundle) with LC_RPATH @loader_path/lib -> lib/libtorch_cuda.dylib, which has no
# LC_RPATH and needs @rpath/libnvrtc.12.dylib: found only through _C.so's LC_RPATH, relative to _C.so.
cp out/fixed/libnvrtc.12.dylib out/misc/chain/torch/lib/
cc x86_64 -o out/misc/chain/torch/lib/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib \
    "$SRC/torch_cuda.c" out/fixed/libnvrtc.12.dylib
clang -target x86_64-apple-macos11 -nostdlib -bundle -fuse-ld=lld -O1 -g0 "-ffile-prefix-map=$SRC=src/macho" \
    -o out/misc/chain/torch/_C.so "$SRC/ext_module.c" out/misc/chain/torch/lib/libtorch_cuda.dylib \
    -Wl,-rpath,@loader_path/lib "$SRC/libSystem.tbd"
# misc/libleaky.dylib: a build machine's absolute LC_RPATH, and @loader_path twice (dyld 15.4 rejects it).
cc arm64 -o out/misc/libleaky.dylib -install_name /Users/runner/work/pytorch/build/lib/libleaky.dylib \
    "$SRC/nvrtc_stub.c" -Wl,-rpath,/Users/runner/work/pytorch/build/lib -Wl,-rpath,@loader_path \
    -Wl,-rpath,@loader_path
# sdk0/: @loader_path twice with the SDK field 0, as GCC-driven links leave it (-platform_version
# macos 11.0 0.0, the later -platform_version overriding the driver's): dyld refuses such a slice
# whatever its release.  libdup_sdk0.dylib is thin x86_64; libdup_universal.dylib pairs that slice
# with an arm64 one built against SDK 11.0 (the same duplicate, only a warning there).
DUP=(-install_name @rpath/libdup.dylib "$SRC/nvrtc_stub.c" -Wl,-rpath,@loader_path -Wl,-rpath,@loader_path)
cc x86_64 -o out/sdk0/libdup_sdk0.dylib "${DUP[@]}" -Wl,-platform_version,macos,11.0,0.0
cc arm64 -o dup_arm64_sdk11.dylib "${DUP[@]}"
"$LIPO" -create out/sdk0/libdup_sdk0.dylib dup_arm64_sdk11.dylib -output out/sdk0/libdup_universal.dylib
# misc/universal.dylib: x86_64 and arm64 slices of the fixed libtorch_cuda.
cc arm64 -o arm64.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
    out/fixed/libnvrtc.12.dylib -Wl,-rpath,@loader_path
"$LIPO" -create out/fixed/libtorch_cuda.dylib arm64.dylib -output out/misc/universal.dylib
# misc/universal_10_9.dylib: what a macosx_10_9_universal2 wheel holds: the x86_64 slice built for
# macOS 10.9, the arm64 one for 11.0 (the first release on Apple silicon).
clang -target x86_64-apple-macos10.9 "${CF[@]}" -o x86_64_10_9.dylib -install_name @rpath/libnvrtc.12.dylib \
    "$SRC/nvrtc_stub.c" "$SRC/libSystem.tbd"
cc arm64 -o arm64_11.dylib -install_name @rpath/libnvrtc.12.dylib "$SRC/nvrtc_stub.c"
"$LIPO" -create x86_64_10_9.dylib arm64_11.dylib -output out/misc/universal_10_9.dylib

# misc/exe/: an executable (MH_EXECUTE) with LC_RPATH @executable_path/../lib, finding lib/libtorch_cuda.dylib.
cp out/fixed/libtorch_cuda.dylib out/fixed/libnvrtc.12.dylib out/misc/exe/lib/
clang -target x86_64-apple-macos11 -nostdlib -fuse-ld=lld -O1 -g0 "-ffile-prefix-map=$SRC=src/macho" \
    -o out/misc/exe/bin/app "$SRC/app.c" out/fixed/libtorch_cuda.dylib -Wl,-rpath,@executable_path/../lib \
    "$SRC/libSystem.tbd"

# chained/: arm64, macOS 12, chained fixups and LC_DYLD_EXPORTS_TRIE (ld64.lld-16); libtorch_cuda.dylib is
# stripped, so its export comes from the trie alone.
if [ -n "$LLD16" ] && [ -n "$STRIP" ]; then
    c12() {
        clang -target arm64-apple-macos12 "${CF[@]}" --ld-path="$LLD16" -Wl,-platform_version,macos,12.0,12.0 \
            -Wl,-fixup_chains "$@" "$SRC/libSystem.tbd"
    }
    c12 -o out/chained/libnvrtc.12.dylib -install_name @rpath/libnvrtc.12.dylib "$SRC/nvrtc_stub.c"
    c12 -o out/chained/libtorch_cuda.dylib -install_name @rpath/libtorch_cuda.dylib "$SRC/torch_cuda.c" \
        out/chained/libnvrtc.12.dylib -Wl,-rpath,@loader_path
    "$STRIP" --strip-all out/chained/libtorch_cuda.dylib
    # misc/arm64_only.dylib: a universal (fat) file whose one slice is arm64: no slice for an x86_64 loader.
    "$LIPO" -create out/chained/libnvrtc.12.dylib -output out/misc/arm64_only.dylib
else
    echo "chained/ skipped: needs ld64.lld-16 and llvm-strip; committed files left as they are"
    rm -rf out/chained
fi

mkdir -p "$HERE/macho"
cp -r "$WORK"/out/* "$HERE/macho/"
find "$HERE/macho" -type f -exec chmod 0644 {} +
echo "built: $(cd "$HERE" && find macho -type f | sort | tr '\n' ' ')"
