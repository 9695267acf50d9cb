/* linkaudit loader fixture: soname_reuse lib/one/libdup.so.1
 * (SONAME libdup.so.1), defines dup_one only. */
int dup_one(void) { return 1; }
