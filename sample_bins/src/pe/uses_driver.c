/* linkaudit fixture: a DLL that calls the CUDA driver API, linked with
 * -Wl,--delayload=nvcuda.dll (delay_driver.dll) and plainly (plain_driver.dll). */
__declspec(dllimport) int cuInit(unsigned flags);
__declspec(dllimport) int cuDeviceGetCount(int *count);

__declspec(dllexport) int gpu_count(void)
{
    int n = 0;
    if (cuInit(0) != 0 || cuDeviceGetCount(&n) != 0)
        return 0;
    return n;
}

/* With -nostdlib the delay-load helper of the C runtime is absent: a stand-in
 * that is never run (lld references it from the delay-import thunks). */
void *__delayLoadHelper2(const void *descriptor, void **slot)
{
    (void)descriptor;
    return *slot;
}
