/* linkaudit fixture: libshim.so, a private helper that the extension module
 * finds through its DT_RUNPATH $ORIGIN/lib. */
#include <string.h>

static const char shim_name[] = "linkaudit-shim";

int shim_checksum(const char *data)
{
    unsigned h = 5381u;
    size_t i, n = data ? strlen(data) : 0;
    for (i = 0; i < n; i++)
        h = h * 33u + (unsigned char)data[i];
    return (int)(h & 0x7fffffffu);
}

const char *shim_version(void) { return shim_name; }
