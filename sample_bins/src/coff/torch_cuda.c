/* The seed bug's Windows half: code that calls NVRTC (nine entry points).  Linked against the
   driver's import library (cuda.lib) the link fails with LNK2019; against nvrtc.lib it succeeds. */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
nvrtcResult nvrtcCreateProgram(nvrtcProgram *, const char *, const char *, int, const char *const *,
                               const char *const *);
nvrtcResult nvrtcCompileProgram(nvrtcProgram, int, const char *const *);
nvrtcResult nvrtcGetPTXSize(nvrtcProgram, unsigned long long *);
nvrtcResult nvrtcGetPTX(nvrtcProgram, char *);
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram, unsigned long long *);
nvrtcResult nvrtcGetProgramLog(nvrtcProgram, char *);
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *);
nvrtcResult nvrtcAddNameExpression(nvrtcProgram, const char *);
__declspec(dllimport) nvrtcResult nvrtcGetLoweredName(nvrtcProgram, const char *, const char **);

__declspec(dllexport) int torch_cuda_compile(const char *src, char *ptx) {
    nvrtcProgram prog;
    unsigned long long size = 0;
    const char *lowered = 0;
    if (nvrtcCreateProgram(&prog, src, "k.cu", 0, 0, 0)) return 1;
    nvrtcAddNameExpression(prog, "k");
    if (nvrtcCompileProgram(prog, 0, 0)) {
        nvrtcGetProgramLogSize(prog, &size);
        nvrtcGetProgramLog(prog, ptx);
        return 2;
    }
    nvrtcGetLoweredName(prog, "k", &lowered);
    nvrtcGetPTXSize(prog, &size);
    nvrtcGetPTX(prog, ptx);
    return nvrtcDestroyProgram(&prog);
}
