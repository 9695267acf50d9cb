/* linkaudit fixture: stand-in for NVRTC's nvrtc64_120_0.dll.  Bodies are
 * placeholders that are never run. */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
static char fake_program;

__declspec(dllexport) nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                                                     int numHeaders, const char *const *headers,
                                                     const char *const *includeNames)
{
    (void)src; (void)name; (void)numHeaders; (void)headers; (void)includeNames;
    *prog = (nvrtcProgram)&fake_program;
    return 0;
}
__declspec(dllexport) nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n, const char *const *o)
{
    (void)prog; (void)n; (void)o;
    return 0;
}
__declspec(dllexport) nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, unsigned long long *size)
{
    (void)prog;
    *size = 1;
    return 0;
}
__declspec(dllexport) nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx)
{
    (void)prog;
    ptx[0] = 0;
    return 0;
}
__declspec(dllexport) nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
    *prog = 0;
    return 0;
}
