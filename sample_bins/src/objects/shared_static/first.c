/* objects/shared_static/libfirst.so's own code (plus all of libcommon_util.a). */
int util_fn(int x);

int first_api(int x)
{
    return util_fn(x) + 1;
}
