/* linkaudit loader fixture: global_preload libroot.so (RUNPATH $ORIGIN/b);
 * needs dup_new@DUP_2 from libdup.so.1. */
extern int dup_new(void);

int root_value(void) { return dup_new() + 1; }
