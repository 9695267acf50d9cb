/* A library that reaches optional dependencies with dlopen(), as CUDA
 * frameworks do: the driver (wrongly, by its unversioned name) and NVRTC
 * (by its real SONAME, which a wheel-repair tool later renamed beside it). */
#include <dlfcn.h>
#include <stddef.h>

static void *driver, *nvrtc;

int dlopens_init(void)
{
    driver = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
    nvrtc = dlopen("libnvrtc.so.12", RTLD_NOW | RTLD_LOCAL);
    return driver != NULL && nvrtc != NULL;
}
