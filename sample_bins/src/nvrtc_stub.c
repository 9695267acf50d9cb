/* linkaudit fixture: stand-in for the NVRTC runtime compiler libnvrtc.so.12.
 * Exported names carry the version node "libnvrtc.so.12" (see libnvrtc.map),
 * as the real library's do.  Bodies are placeholders that are never run. */
#include <stddef.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

static char fake_program;

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
                               const char *name, int numHeaders,
                               const char *const *headers,
                               const char *const *includeNames)
{
    (void)name; (void)headers; (void)includeNames;
    if (!prog || !src || numHeaders < 0)
        return 1;
    *prog = (nvrtcProgram)&fake_program;
    return 0;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
    if (!prog)
        return 1;
    *prog = NULL;
    return 0;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                const char *const *options)
{
    (void)options;
    return (prog && numOptions >= 0) ? 0 : 1;
}

static nvrtcResult put_size(nvrtcProgram prog, size_t *out, size_t n)
{
    if (!prog || !out)
        return 1;
    *out = n;
    return 0;
}

static nvrtcResult put_text(nvrtcProgram prog, char *out, char c)
{
    if (!prog || !out)
        return 1;
    out[0] = c;
    return 0;
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *n) { return put_size(prog, n, 1); }
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx) { return put_text(prog, ptx, 0); }
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *n) { return put_size(prog, n, 1); }
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin) { return put_text(prog, cubin, 0); }
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *n) { return put_size(prog, n, 1); }
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log) { return put_text(prog, log, 0); }
