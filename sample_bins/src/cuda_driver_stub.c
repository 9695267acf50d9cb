/* linkaudit fixture: a tiny stand-in for the GPU driver library libcuda.so.1.
 * Only the names matter; the bodies are placeholders that are never run. */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

static int fake_driver_version = 12040;

CUresult cuInit(unsigned int flags) { return flags ? 1 : 0; }

CUresult cuDriverGetVersion(int *version)
{
    if (!version)
        return 1;
    *version = fake_driver_version;
    return 0;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (!device)
        return 1;
    *device = ordinal;
    return 0;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    if (!module || !image)
        return 1;
    *module = (CUmodule)0;
    return 0;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    (void)hmod;
    if (!hfunc || !name)
        return 1;
    *hfunc = (CUfunction)0;
    return 0;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                        CUstream stream, void **params, void **extra)
{
    (void)stream; (void)params; (void)extra;
    return (f && gx && gy && gz && bx && by && bz && shmem < 65536u) ? 0 : 1;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                             unsigned long long flags, int *status)
{
    (void)version; (void)flags;
    if (status)
        *status = 0;
    if (!symbol || !pfn)
        return 1;
    *pfn = (void *)0;
    return 0;
}
