"""ELF hygiene of shared objects and executables: ``executable-stack`` and ``text-relocations``."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..model import Binary, Format, Kind
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule

#: Machines whose ABI gives a process an executable stack when an object has no
#: PT_GNU_STACK (glibc's DEFAULT_STACK_PERMS includes PF_X there).
EXECUTABLE_STACK_BY_DEFAULT = frozenset(
    {"x86", "x86-64", "arm", "ppc", "ppc64", "s390", "s390x", "mips", "mipsel", "sparc"}
)


def _loaded_by_dlopen(binary: Binary, context: AuditContext) -> bool:
    """True for a file that is dlopen()ed: an extension module, or an input no import root's closure reaches."""
    if binary.kind is Kind.PYTHON_EXTENSION:
        return True
    linkage = context.linkage
    if linkage is None or binary.kind is not Kind.SHARED_LIBRARY:
        return False
    return binary.path in linkage.dlopen_roots()


class ExecutableStack(Rule):
    id = "executable-stack"
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "the object asks for an executable stack (PT_GNU_STACK RWE, or none on x86-64, i386, ...)"
    explain = """\
A shared object whose PT_GNU_STACK segment is executable (RWE) — or that has no
PT_GNU_STACK at all on an ABI whose default stack is executable (x86-64, i386,
32-bit ARM, POWER, s390, MIPS, SPARC) — makes the whole process's stack
executable. glibc 2.41 and later refuse to dlopen such a library unless the
stack already is executable ("cannot enable executable stack as shared object
requires: Invalid argument"), so a Python extension module or any other
dlopen()ed plugin built this way stops loading on current distributions: an
error for those; a warning for executables and libraries loaded at start-up,
where it is still a hardening hole.

The usual cause is one assembly file without `.section .note.GNU-stack,"",@progbits`
(the linker then assumes the stack must be executable), or -z execstack. Add the
note to the assembly sources, or link with -z noexecstack after checking that no
code needs it.
"""
    evidence = {
        "gnu_stack": "rwx (PT_GNU_STACK asks for it) or absent (the ABI default is executable)",
        "machine": "the ELF machine",
        "dlopened": "true when the file is loaded with dlopen (an extension module, or reached by no import root)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for binary in context.binaries:
            if (
                binary.kind is Kind.RELOCATABLE
                and binary.format is Format.ELF
                and binary.machine in EXECUTABLE_STACK_BY_DEFAULT
                and ".text" in binary.section_names
                and ".note.GNU-stack" not in binary.section_names
            ):
                # The culprit object: linked into a shared object, it makes the stack executable.
                yield self.finding(
                    binary,
                    ".note.GNU-stack",
                    "no .note.GNU-stack section: any shared object or executable this object is linked into "
                    'gets an executable stack (add `.section .note.GNU-stack,"",@progbits` to the assembly)',
                    {"gnu_stack": "absent", "machine": binary.machine, "dlopened": False},
                    Severity.WARNING,
                )
                continue
            if binary.format is not Format.ELF or binary.kind not in (
                Kind.SHARED_LIBRARY, Kind.PYTHON_EXTENSION, Kind.EXECUTABLE, Kind.PIE_EXECUTABLE,
            ):  # fmt: skip
                continue
            if binary.gnu_stack == "rwx":
                state = "rwx"
            elif binary.gnu_stack is None and binary.machine in EXECUTABLE_STACK_BY_DEFAULT:
                state = "absent"
            else:
                continue
            dlopened = _loaded_by_dlopen(binary, context)
            why = (
                "PT_GNU_STACK asks for an executable stack"
                if state == "rwx"
                else (f"there is no PT_GNU_STACK, and the {binary.machine} default stack is executable")
            )
            if dlopened:
                message = (
                    f"{why}: glibc 2.41 and later refuse to dlopen this file (cannot enable executable stack "
                    "as shared object requires) — mark the assembly sources with .note.GNU-stack or link "
                    "with -z noexecstack"
                )
            else:
                message = f"{why}: the whole process gets an executable stack; link with -z noexecstack"
            yield self.finding(
                binary,
                "PT_GNU_STACK",
                message,
                {"gnu_stack": state, "machine": binary.machine, "dlopened": dlopened},
                None if dlopened else Severity.WARNING,
            )


class TextRelocations(Rule):
    id = "text-relocations"
    formats = ELF_ONLY
    severity = Severity.WARNING
    summary = "the loader must write into the text segment to relocate the object (DT_TEXTREL / DF_TEXTREL)"
    explain = """\
DT_TEXTREL (or DF_TEXTREL in DT_FLAGS) says the object has relocations against
read-only, executable pages: the loader makes them writable, patches them and
protects them again. The pages can no longer be shared between processes, the
object cannot load where W^X is enforced (SELinux execmod, hardened kernels),
and startup is slower. The cause is code compiled without -fPIC (or hand-written
assembly with absolute addresses) linked into a shared object; rebuild it with
-fPIC. On x86-64 the linker refuses most such links; i386 and others accept them
with a warning.
"""
    evidence = {"machine": "the ELF machine"}

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for binary in context.binaries:
            if binary.text_relocations:
                yield self.finding(
                    binary,
                    "DT_TEXTREL",
                    "relocations in the text segment: code built without -fPIC; the pages cannot be shared "
                    "and the object will not load where W^X is enforced — rebuild with -fPIC",
                    {"machine": binary.machine},
                )
