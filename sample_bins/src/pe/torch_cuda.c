/* linkaudit fixture: stand-in for torch_cuda.dll.  It calls NVRTC (the runtime
 * compiler) and never the driver API.  Built twice by build_pe.sh: broken/
 * links an import library that claims nvcuda.dll (the driver) exports the
 * nvrtc* functions — the DLL then imports them from nvcuda.dll, which does not
 * have them; fixed/ links nvrtc64_120_0.dll's import library. */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

__declspec(dllimport) nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                                                     int numHeaders, const char *const *headers,
                                                     const char *const *includeNames);
__declspec(dllimport) nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options);
__declspec(dllimport) nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, unsigned long long *size);
__declspec(dllimport) nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx);
__declspec(dllimport) nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog);

__declspec(dllexport) int torch_cuda_compile(const char *src, char *ptx, unsigned long long cap)
{
    nvrtcProgram prog;
    unsigned long long size = 0;
    int rc;
    if (nvrtcCreateProgram(&prog, src, "kernel.cu", 0, 0, 0) != 0)
        return -1;
    rc = nvrtcCompileProgram(prog, 0, 0);
    if (rc == 0 && nvrtcGetPTXSize(prog, &size) == 0 && size <= cap)
        rc = nvrtcGetPTX(prog, ptx);
    nvrtcDestroyProgram(&prog);
    return rc;
}
