/* member util.o of objects/shared_static/libcommon_util.a, linked whole into
   both libfirst.so and libsecond.so (default visibility: both export it). */
int util_version = 3;

int util_fn(int x)
{
    return x + util_version;
}
