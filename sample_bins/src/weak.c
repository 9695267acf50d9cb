/* linkaudit fixture: one weak undefined symbol (optional_hook, fine to be
 * missing), one strong undefined symbol that no DT_NEEDED provides
 * (required_hook, really missing), and one resolved libc symbol (strlen). */
#include <string.h>

extern void optional_hook(const char *why) __attribute__((weak));
extern int required_hook(int value);

int weak_demo(const char *why)
{
    if (optional_hook)
        optional_hook(why);
    return required_hook((int)strlen(why));
}
