/* linkaudit fixture: app.dll imports present_fn (there), forwarded_fn (a forwarder
 * to nvrtc64_120_0.dll) and absent_fn (which helper.dll does not export). */
__declspec(dllimport) int present_fn(int x);
__declspec(dllimport) int absent_fn(int x);
__declspec(dllimport) int forwarded_fn(char *ptx);

__declspec(dllexport) int app_run(char *buf)
{
    return present_fn(1) + absent_fn(2) + forwarded_fn(buf);
}
