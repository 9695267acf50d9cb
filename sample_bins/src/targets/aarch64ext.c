/* An aarch64 Python extension module of a manylinux_2_17_aarch64 wheel: it needs
 * libc.so.6 (puts@GLIBC_2.17; fstat64@GLIBC_2.33, above the policy), libm.so.6 (cos),
 * ld-linux-aarch64.so.1 (the loader, as some toolchains record it), and libmissing.so.1,
 * which is not a system library of the policy and not shipped. */
int puts(const char *s);
int fstat64(int fd, void *buf);
double cos(double x);
int missing_fn(void);

volatile double angle;

int PyInit_aarch64ext(void) {
    char buf[144];
    puts("x");
    return fstat64(0, buf) + (int)cos(angle) + missing_fn();
}
