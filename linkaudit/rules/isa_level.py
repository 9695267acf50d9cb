"""``isa-level``: an x86 file whose GNU property note needs a micro-architecture level (x86-64-v2,
-v3, -v4) above what its wheel's platform tag promises (the baseline of every x86-64 CPU)."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..model import Binary, Format
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule

#: The levels as binutils and glibc name them, by the bit of GNU_PROPERTY_X86_ISA_1_NEEDED
#: (``GNU_PROPERTY_X86_ISA_1_BASELINE`` = bit 0, ``V2`` = bit 1, ``V3`` = bit 2, ``V4`` = bit 3).
LEVELS: tuple[str, ...] = ("x86-64-baseline", "x86-64-v2", "x86-64-v3", "x86-64-v4")
#: The wheel architectures whose tags promise the baseline alone (PEP 600 defines no levels).
X86_ARCHES = frozenset({"x86_64", "i686"})
#: What each level adds that older CPUs lack, for the message (the x86-64 psABI's level table).
ADDS = {
    "x86-64-v2": "SSE4.2, POPCNT",
    "x86-64-v3": "AVX2, BMI2, FMA",
    "x86-64-v4": "AVX-512",
}


def needed_level(bits: int) -> str | None:
    """The highest level ``bits`` (``Binary.x86_isa_needed``) needs, or ``None`` for the baseline
    or less: glibc's ``get_isa_level`` takes the highest bit set (``sysdeps/x86/get-isa-level.h``);
    bits above v4 are named by number."""
    if bits <= 1:
        return None
    top = bits.bit_length() - 1
    return LEVELS[top] if top < len(LEVELS) else f"x86 ISA level bit {top}"


class IsaLevel(Rule):
    id = "isa-level"
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "an x86 file whose GNU property note needs x86-64-v2/v3/v4 while its wheel's platform tag promises every x86-64 CPU"
    explain = """\
A file linked with -march=x86-64-v3 (or -Wl,-z,x86-64-v3) records the ISA
levels its code needs in its GNU property note (GNU_PROPERTY_X86_ISA_1_NEEDED,
readelf -n: "x86 ISA needed: x86-64-v3"). glibc's ld.so (2.33 and later,
sysdeps/x86/dl-prop.h) compares it with the CPU before mapping the file and
refuses an older one: "CPU ISA level is lower than required". Older glibc and
musl (which reads no notes) map it, and the process dies of SIGILL at the
first AVX2 instruction. A manylinux or
musllinux x86_64 / i686 tag promises every CPU of its architecture (the
baseline): build with the baseline (-march=x86-64, dispatching at run time with
function multiversioning or ifuncs), or do not ship it as a plain x86_64 wheel.
auditwheel checks the same since 6.1 (--disable-isa-ext-check turns it off;
here: a severity in linkaudit.toml). Checked for the files of wheels, unzipped
wheels and installed sites, whose tags say what they promise.
"""
    evidence = {
        "needed": "the highest level the file's note needs (x86-64-v3)",
        "needed_bits": "GNU_PROPERTY_X86_ISA_1_NEEDED as written",
        "tag": "the platform tag whose promise it breaks",
        "package": "the wheel or installed package the tag comes from",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for binary in context.binaries:
            if binary.format is not Format.ELF or binary.x86_isa_needed <= 1:
                continue
            promised = context.wheel_policies.get(binary.path)
            if promised is None:
                continue
            policy = next((p for p in promised.policies if p.arch in X86_ARCHES), None)
            level = needed_level(binary.x86_isa_needed)
            if policy is not None and level is not None:
                yield self._finding(binary, level, policy.tag, policy.family == "musllinux", promised.package)

    def _finding(self, binary: Binary, level: str, tag: str, musl: bool, package: str) -> Finding:
        adds = ADDS.get(level)
        fails = (
            "musl's loader does not read the note: the process dies of SIGILL on an older CPU"
            if musl
            else 'glibc\'s ld.so refuses it on an older CPU ("CPU ISA level is lower than required"), an older '
            "glibc maps it and the process dies of SIGILL"
        )
        return self.finding(
            binary,
            level,
            f"needs {level} (GNU_PROPERTY_X86_ISA_1_NEEDED{': ' + adds if adds else ''}) but the platform tag "
            f"{tag} promises every CPU of its architecture: {fails} — build for the baseline (-march=x86-64) "
            "and dispatch at run time",
            {"needed": level, "needed_bits": binary.x86_isa_needed, "tag": tag, "package": package},
        )
