/* linkaudit fixture: stand-in for libtorch_cuda.so.  It calls NVRTC (the
 * runtime compiler) but never the driver API, so a DT_NEEDED on libcuda.so.1
 * is an unused driver link, and a missing DT_NEEDED on libnvrtc.so.12 leaves
 * the nine nvrtc* symbols unresolved.  Built twice by build.sh: broken/ and
 * fixed/. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

extern nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
                                      const char *name, int numHeaders,
                                      const char *const *headers,
                                      const char *const *includeNames);
extern nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog);
extern nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                       const char *const *options);
extern nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *ptxSizeRet);
extern nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx);
extern nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *cubinSizeRet);
extern nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin);
extern nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *logSizeRet);
extern nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log);

static char *fetch_log(nvrtcProgram prog)
{
    size_t n = 0;
    char *log;
    if (nvrtcGetProgramLogSize(prog, &n) != 0)
        return NULL;
    log = malloc(n + 1);
    if (!log)
        return NULL;
    if (nvrtcGetProgramLog(prog, log) != 0) {
        free(log);
        return NULL;
    }
    log[n] = '\0';
    return log;
}

/* Compile a kernel to PTX (want_cubin == 0) or CUBIN (want_cubin != 0).
 * Returns a malloc'd buffer or NULL; *log_out gets the compiler log. */
char *torch_cuda_jit_compile(const char *source, const char *name,
                             const char *arch_flag, int want_cubin,
                             size_t *size_out, char **log_out)
{
    nvrtcProgram prog;
    const char *opts[2] = { arch_flag, "--std=c++17" };
    size_t n = 0;
    char *out = NULL;

    if (nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL) != 0)
        return NULL;
    if (nvrtcCompileProgram(prog, arch_flag ? 2 : 0, arch_flag ? opts : NULL) != 0) {
        if (log_out)
            *log_out = fetch_log(prog);
        nvrtcDestroyProgram(&prog);
        return NULL;
    }
    if (want_cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n))
        goto done;
    out = malloc(n ? n : 1);
    if (!out)
        goto done;
    if (want_cubin ? nvrtcGetCUBIN(prog, out) : nvrtcGetPTX(prog, out)) {
        free(out);
        out = NULL;
        goto done;
    }
    if (size_out)
        *size_out = n;
done:
    if (log_out)
        *log_out = fetch_log(prog);
    nvrtcDestroyProgram(&prog);
    return out;
}

int torch_cuda_kernel_name_ok(const char *name)
{
    return name && strlen(name) < 256;
}
