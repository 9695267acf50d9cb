/* linkaudit loader fixture: soname_reuse lib/two/libdup.so.1
 * (same SONAME libdup.so.1, a different build), defines dup_two only. */
int dup_two(void) { return 2; }
