/* lib/libcondademo.so of the sample conda package: needs a library of its own package
   (libcondahelper.so), one its depends bring (libcudart.so.13: cuda-cudart), one no depends
   brings (libz.so.1: libzlib) and glibc's libc.so.6 (the sysroot). Never executed. */
#include <string.h>

int condahelper(void);
int cudaRuntimeGetVersion(int *);
unsigned long zlibCompileFlags(void);

int condademo(const char *s) {
    int v = 0;
    cudaRuntimeGetVersion(&v);
    return condahelper() + v + (int)zlibCompileFlags() + (int)strlen(s);
}
