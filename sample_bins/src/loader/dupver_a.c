/* linkaudit loader fixture: global_preload a/libdup.so.1 (SONAME
 * libdup.so.1): dup_fn@@DUP_1 only (dupver_a.map). */
int dup_fn(void) { return 1; }
