/* Link-time stand-ins for libcondahelper.so, libcudart.so.13 and libz.so.1 (their SONAMEs set by
   build_conda.sh); only libcondahelper.so is packed. Never executed. */
#include <string.h>

int condahelper(void) { return (int)strlen("1"); }
int cudaRuntimeGetVersion(int *v) { *v = 13000; return 0; }
unsigned long zlibCompileFlags(void) { return 0; }
