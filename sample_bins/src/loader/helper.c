/* linkaudit loader fixture: pyext lib/libhelper.so. */
long helper_scale(long x) { return x * 10; }
