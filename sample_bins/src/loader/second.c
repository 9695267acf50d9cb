/* linkaudit loader fixture: soname_reuse lib/libsecond.so (RUNPATH
 * $ORIGIN/two), NEEDs libdup.so.1 and calls dup_two. */
extern int dup_two(void);

int second_value(void) { return dup_two() + 20; }
