/* linkaudit fixture: an older NVRTC stand-in (libnvrtc.12.dylib) that lacks nvrtcCompileProgram.
 * Shipped in misc/missing_symbol/ next to a libtorch_cuda.dylib linked against the full one: dyld
 * finds the dylib, then stops at "Symbol not found: _nvrtcCompileProgram".  Never run. */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
static char fake_program;

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src)
{
    (void)src;
    *prog = (nvrtcProgram)&fake_program;
    return 0;
}
