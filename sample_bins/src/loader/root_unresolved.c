/* linkaudit loader fixture: unresolved libroot.so.  half_present is defined
 * by libhalf.so, half_missing by nobody (a real unresolved symbol), and
 * optional_feature is a weak undefined symbol (fine to be missing). */
extern int half_present(int x);
extern int half_missing(int x);
extern int optional_feature(int x) __attribute__((weak));

int root_value(int x)
{
    int r = half_present(x) + half_missing(x);
    if (optional_feature)
        r += optional_feature(x);
    return r;
}
