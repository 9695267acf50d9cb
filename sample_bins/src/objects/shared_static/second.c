/* objects/shared_static/libsecond.so's own code (plus all of libcommon_util.a). */
int util_fn(int x);

int second_api(int x)
{
    return util_fn(x) + 2;
}
