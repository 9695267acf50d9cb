/* linkaudit loader fixture: libleaf.so, the end of a NEEDED chain
 * (runpath_not_inherited, rpath_inherited, rpath_cut_by_runpath,
 * ancestor_runpath; and the x86-64 and i386 builds in wrong_class and
 * not_elf_candidate). */
int leaf_value(int x) { return x * 3 + 1; }
