#!/usr/bin/env bash
# Run the README's test command as on a stock Debian machine, whose LLVM is 14: /usr/lib/llvm-16 is
# hidden under an empty tmpfs in a private mount namespace (the llvm-*-16 links in /usr/bin dangle),
# so every test needing llvm-objdump/llvm-nm >= 16 must skip, naming the package, and none may fail.
#
#   bash scripts/test_without_llvm16.sh [pytest args...]
#
# As root: unshare -m.  Unprivileged: unshare -rm (a user namespace mapping you to root inside it).
# Nothing outside this command's namespace changes.  Uses the venv at .venv (made by the README's
# test command) or $PYTHON.  Exit status: pytest's; 3 when this machine cannot hide the directory
# (no mount namespaces here).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
HIDE=${HIDE:-/usr/lib/llvm-16}
[ -x "$PYTHON" ] || { echo "no $PYTHON: run the README's test command first (or set PYTHON)"; exit 2; }
if [ ! -d "$HIDE" ]; then
    echo "$HIDE is absent here: nothing to hide, running the suite as it is"
    exec "$PYTHON" -m pytest -q -rs "$@"
fi
if [ "$(id -u)" = 0 ]; then unshare=(unshare -m); else unshare=(unshare -rm); fi
"${unshare[@]}" true 2>/dev/null || { echo "cannot make a mount namespace here (${unshare[*]})"; exit 3; }
# shellcheck disable=SC2016  # expanded by the inner shell
exec "${unshare[@]}" sh -c '
    HIDE_DIR=$1; shift
    mount -t tmpfs -o ro,size=1m linkaudit-hide "$HIDE_DIR" || exit 3
    if command -v llvm-objdump-16 >/dev/null 2>&1 && llvm-objdump-16 --version >/dev/null 2>&1; then
        echo "llvm-objdump-16 still runs: hiding failed" >&2; exit 3
    fi
    echo "LLVM 16 hidden: $(ls -A "$HIDE_DIR" | wc -l) entries in $HIDE_DIR; llvm-objdump is $(llvm-objdump --version 2>/dev/null | sed -n "s/.*LLVM version //p" | head -1)"
    exec "$@"
' hide "$HIDE" "$PYTHON" -m pytest -q -rs "$@"
