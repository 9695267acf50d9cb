/* linkaudit fixture: stand-in for NVRTC (libnvrtc.12.dylib).  Never run. */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
static char fake_program;

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src)
{
    (void)src;
    *prog = (nvrtcProgram)&fake_program;
    return 0;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n, const char *const *o)
{
    (void)prog; (void)n; (void)o;
    return 0;
}
