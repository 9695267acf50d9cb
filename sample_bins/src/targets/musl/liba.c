/* liba.so: NEEDs libb.so and has no rpath of its own: musl finds libb.so through the
 * rpath of the program that loaded it (needed_by chain); glibc's RUNPATH is not inherited. */
int b_value(void);
int a_value(void) { return b_value() + 1; }
