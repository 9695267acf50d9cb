/* linkaudit loader fixture: libroot.so of origin_symlink; NEEDs libdep.so,
 * found through DT_RUNPATH $ORIGIN/../deps. */
extern int dep_value(int x);

int root_value(int x) { return dep_value(x) + 1; }
