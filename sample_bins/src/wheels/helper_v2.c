/* linkaudit wheel fixture: pkg.libs/libhelper.so of the abi3 wheel, a build that differs from
 * the cp311/cp312 wheels' copy (so that installing them together is a clash). */
long helper_scale(long x) { return x * 20; }
