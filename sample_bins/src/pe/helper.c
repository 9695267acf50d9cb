/* linkaudit fixture: helper.dll exports present_fn (and a forwarder, see helper.def). */
__declspec(dllexport) int present_fn(int x)
{
    return x + 1;
}
