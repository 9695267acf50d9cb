/* linkaudit fixture: stand-in for libtorch_cuda.dylib: calls NVRTC.  broken/ is linked with
 * -undefined dynamic_lookup and no NVRTC (the symbols are looked up flat, in whatever happens to
 * be loaded: "Symbol not found" at load); fixed/ links @rpath/libnvrtc.12.dylib with LC_RPATH
 * @loader_path. */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src);
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n, const char *const *o);

int torch_cuda_compile(const char *src)
{
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, src) != 0)
        return -1;
    return nvrtcCompileProgram(prog, 0, 0);
}
