/* linkaudit loader fixture: global_preload b/libdup.so.1 (SONAME
 * libdup.so.1): dup_fn@DUP_1 (old, kept for compatibility), dup_fn@@DUP_2
 * (default) and dup_new@@DUP_2 (dupver_b.map). */
int dup_fn_1(void) { return 1; }
int dup_fn_2(void) { return 2; }
int dup_new(void) { return 3; }

__asm__(".symver dup_fn_1, dup_fn@DUP_1");
__asm__(".symver dup_fn_2, dup_fn@@DUP_2");
