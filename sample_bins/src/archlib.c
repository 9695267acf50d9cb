/* linkaudit fixture: a small library built for other ELF classes and byte
 * orders (i386, s390x, powerpc).  Uses a few libc functions so that the
 * cross libc's symbol versions appear in .gnu.version_r. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char arch_tag[] = "linkaudit-arch";

const char *arch_name(void) { return arch_tag; }

size_t arch_strlen(const char *s) { return s ? strlen(s) : 0; }

char *arch_describe(int value)
{
    char *buf = malloc(64);
    if (buf)
        snprintf(buf, 64, "%s:%d", arch_tag, value);
    return buf;
}

void *arch_copy(void *dst, const void *src, size_t n) { return memcpy(dst, src, n); }
