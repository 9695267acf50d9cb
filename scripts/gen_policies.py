#!/usr/bin/env python3
"""Write ``linkaudit/rules/data/policies.json`` from auditwheel's published policy data.

auditwheel ships the manylinux and musllinux policies users trust as two JSON files,
``auditwheel/policy/manylinux-policy.json`` and ``musllinux-policy.json``.  This script
reads them out of an auditwheel wheel (``pip download --no-deps auditwheel``, or the wheel
given) and writes our data file with every key as published: per policy its aliases,
priority, library whitelist and symbol blacklist, and per architecture its symbol
versions (``GLIBC``, ``GLIBCXX``, ``CXXABI``, ``GCC``, ``LIBATOMIC``, ``ZLIB``).  It adds
what auditwheel keeps in code, not data: the dynamic loader's file name per architecture.
The auditwheel version read and the date are recorded in the file.

Usage::

    python scripts/gen_policies.py [AUDITWHEEL.whl] [--date YYYY-MM-DD]

Without a wheel it runs ``pip download --no-deps auditwheel`` into a temporary directory.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

OUT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "linkaudit", "rules", "data", "policies.json"
)

#: The glibc dynamic loader per architecture (its PT_INTERP path as the toolchains write it):
#: glibc ``sysdeps/unix/sysv/linux/*/ldconfig.h`` and ``shlib-versions`` of each port.
GLIBC_LOADERS = {
    "x86_64": "/lib64/ld-linux-x86-64.so.2",
    "i686": "/lib/ld-linux.so.2",
    "aarch64": "/lib/ld-linux-aarch64.so.1",
    "ppc64le": "/lib64/ld64.so.2",
    "ppc64": "/lib64/ld64.so.1",
    "s390x": "/lib/ld64.so.1",
    "armv7l": "/lib/ld-linux-armhf.so.3",
    "riscv64": "/lib/ld-linux-riscv64-lp64d.so.1",
    "loongarch64": "/lib64/ld-linux-loongarch-lp64d.so.1",
}

#: musl's ``$ARCH`` in ``/lib/ld-musl-$ARCH.so.1`` per wheel architecture (musl ``arch/*``,
#: ``LDSO_ARCH`` of its Makefile; armv7l wheels are hard-float).
MUSL_ARCH = {
    "x86_64": "x86_64",
    "i686": "i386",
    "aarch64": "aarch64",
    "ppc64le": "powerpc64le",
    "s390x": "s390x",
    "armv7l": "armhf",
    "riscv64": "riscv64",
    "loongarch64": "loongarch64",
}

#: The ELF machine as linkaudit's model spells it (``Binary.machine``) per wheel architecture.
MACHINES = {
    "x86_64": "x86-64",
    "i686": "x86",
    "aarch64": "aarch64",
    "ppc64le": "ppc64le",
    "ppc64": "ppc64",
    "s390x": "s390x",
    "armv7l": "arm",
    "riscv64": "riscv64",
    "loongarch64": "loongarch64",
}


def _fetch(tmp: str) -> str:
    """``pip download --no-deps auditwheel`` into ``tmp``; the wheel's path."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", tmp, "auditwheel"],
        check=True,
    )
    found = glob.glob(os.path.join(tmp, "auditwheel-*.whl"))
    if not found:
        raise SystemExit("pip download gave no auditwheel wheel")
    return found[0]


def read_auditwheel(wheel: str) -> tuple[str, list[dict[str, object]], list[dict[str, object]]]:
    """(auditwheel version, manylinux policies, musllinux policies) as published in ``wheel``."""
    match = re.match(r"auditwheel-([^-]+)-", os.path.basename(wheel))
    if match is None:
        raise SystemExit(f"{wheel}: not an auditwheel wheel name")
    with zipfile.ZipFile(wheel) as zf:
        many = json.loads(zf.read("auditwheel/policy/manylinux-policy.json"))
        musl = json.loads(zf.read("auditwheel/policy/musllinux-policy.json"))
    return match.group(1), many, musl


def _policy(entry: dict[str, object], family: str) -> dict[str, object]:
    """One published policy, every key kept, the ``linux`` pseudo-policy's empty maps included."""
    return {
        "name": entry["name"],
        "family": family,
        "aliases": list(entry["aliases"]),  # type: ignore[call-overload]
        "priority": entry["priority"],
        "symbol_versions": entry["symbol_versions"],
        "lib_whitelist": list(entry["lib_whitelist"]),  # type: ignore[call-overload]
        "blacklist": entry["blacklist"],
    }


def build(version: str, many: list[dict[str, object]], musl: list[dict[str, object]], date: str) -> dict[str, object]:
    """The data file's content (see the module docstring)."""
    policies = [_policy(p, "manylinux") for p in many if p["name"] != "linux"]
    policies += [_policy(p, "musllinux") for p in musl if p["name"] != "linux"]
    return {
        "schema": 1,
        "source": f"auditwheel {version}: auditwheel/policy/manylinux-policy.json and musllinux-policy.json",
        "auditwheel_version": version,
        "generated": date,
        "generator": "scripts/gen_policies.py",
        "glibc_loaders": GLIBC_LOADERS,
        "musl_arch": MUSL_ARCH,
        "machines": MACHINES,
        "policies": policies,
    }


def main(argv: list[str] | None = None) -> int:
    """Read the policies and write ``OUT``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", nargs="?", help="an auditwheel wheel (default: pip download it)")
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or _fetch(tmp)
        version, many, musl = read_auditwheel(wheel)
    data = build(version, many, musl, args.date)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=False)
        fh.write("\n")
    print(f"{args.out}: {len(data['policies'])} policies from auditwheel {version}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
