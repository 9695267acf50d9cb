/* A stand-in for aarch64 glibc's libc.so.6, only to link against (never committed: the
 * target's system library must be absent here, as on an x86-64 auditing host). */
int puts(const char *s) { (void)s; return 0; }
int fstat64(int fd, void *buf) { (void)fd; (void)buf; return 0; }
