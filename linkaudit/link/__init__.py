"""Static-link emulation: what a linker does with one link line, before any binary exists.

``line`` reads link lines (response files, CMake ``link.txt``, Ninja link edges); ``elf`` the GNU
ld / lld ELF link (archive members pulled, global definitions); ``coff`` the link.exe / lld-link
COFF link (objects, static and import libraries, directives); ``sources`` the generated wrapper
files of a source tree.  Beside ``loader/`` (dynamic loading); reads the model only, never rules,
the CLI or output.
"""
