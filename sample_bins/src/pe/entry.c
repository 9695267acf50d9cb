/* linkaudit fixture: the DLL entry point of every PE sample (built with -nostdlib,
 * so no C runtime is linked or imported).  Never run. */
int __stdcall DllMainCRTStartup(void *instance, unsigned reason, void *reserved)
{
    (void)instance; (void)reason; (void)reserved;
    return 1;
}
