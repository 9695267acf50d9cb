/* libmissing.so.1: needed by the aarch64 extension, shipped nowhere. */
int missing_fn(void) { return 1; }
