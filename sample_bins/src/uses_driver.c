/* linkaudit fixture: a plugin that really uses the driver API (cuInit,
 * cuLaunchKernel), so its DT_NEEDED on libcuda.so.1 is legitimate. */
typedef int CUresult;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

extern CUresult cuInit(unsigned int flags);
extern CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                               CUstream stream, void **params, void **extra);

int plugin_launch(CUfunction f, unsigned blocks, unsigned threads, void **params)
{
    if (cuInit(0) != 0)
        return -1;
    return cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, (CUstream)0, params,
                          (void **)0);
}
