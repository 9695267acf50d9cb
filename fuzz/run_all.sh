#!/usr/bin/env bash
# Run every linkaudit fuzz harness for N executions each (default 2000), one after another.
#
#   bash fuzz/run_all.sh [N] [extra libFuzzer flags...]
#
# Each harness starts from its seeds (sample_bins/, fuzz/seeds/) in a fresh temporary corpus,
# with the memory and time budget of one input from fuzz/common.py (-rss_limit_mb, -timeout)
# unless the extra flags set them.  A finding (an exception other than the reader's named error,
# a timeout, memory past the limit) stops that harness with a non-zero status and leaves the
# input in $FUZZ_ARTIFACTS (default: a temporary directory); the script goes on with the others
# and exits non-zero if any harness failed.  Needs the `fuzz` extra: pip install -e '.[fuzz]'.
set -u
runs="${1:-2000}"
shift || true
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
artifacts="${FUZZ_ARTIFACTS:-$(mktemp -d -t linkaudit-fuzz-XXXXXX)}"
mkdir -p "$artifacts"
failed=()
for harness in elf archive macho pe ldcache config wheel tar conda; do
    log="$artifacts/$harness.log"
    if "$python" "$here/fuzz_$harness.py" "-runs=$runs" "-artifact_prefix=$artifacts/$harness-" "$@" >"$log" 2>&1; then
        echo "fuzz_$harness: $(grep -E '^Done [0-9]+ runs' "$log" | tail -1)"
    else
        echo "fuzz_$harness: FAILED (log and input in $artifacts)"
        tail -30 "$log"
        failed+=("$harness")
    fi
done
if [ "${#failed[@]}" -ne 0 ]; then
    echo "fuzz findings: ${failed[*]}"
    exit 1
fi
