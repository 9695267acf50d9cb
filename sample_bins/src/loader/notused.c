/* linkaudit loader fixture: unused_needed libnotused.so (NEEDED by
 * libroot.so, but none of its symbols is referenced). */
int notused_value(int x) { return x >> 1; }
