/* linkaudit loader fixture: libdep.so of origin_symlink. */
int dep_value(int x) { return x ^ 0x5a; }
