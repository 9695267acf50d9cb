/* Calls the CUDA driver API through dllimport (references __imp_cuInit). */
__declspec(dllimport) int cuInit(unsigned int);
__declspec(dllimport) int cuDeviceGetCount(int *);
int driver_use(void) { int n = 0; cuInit(0); cuDeviceGetCount(&n); return n; }
