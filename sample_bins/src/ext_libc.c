/* linkaudit fixture: an extension module linked without the C library (-nodefaultlibs), as
 * numpy's _operand_flag_tests is: no DT_NEEDED at all.  Its undefined symbols (strlen, memcpy
 * and crtbeginS.o's weak __cxa_finalize) are libc's: the interpreter's global scope has them. */
#include <string.h>

static char buffer[64];

void *PyInit__libconly(const char *name)
{
    size_t n = strlen(name);
    memcpy(buffer, name, n < sizeof buffer ? n : sizeof buffer - 1);
    return buffer;
}
