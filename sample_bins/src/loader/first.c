/* linkaudit loader fixture: soname_reuse lib/libfirst.so (RUNPATH
 * $ORIGIN/one), NEEDs libdup.so.1 and calls dup_one. */
extern int dup_one(void);

int first_value(void) { return dup_one() + 10; }
