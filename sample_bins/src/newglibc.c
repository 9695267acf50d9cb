/* linkaudit fixture: needs glibc symbols versioned above GLIBC_2.17:
 * getrandom (GLIBC_2.25) and reallocarray (GLIBC_2.26); memcpy is
 * GLIBC_2.14 on x86-64 and malloc/free GLIBC_2.2.5. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

void *newglibc_random_block(size_t count, size_t size)
{
    unsigned char *p = reallocarray(NULL, count, size);
    if (!p)
        return NULL;
    if (getrandom(p, count * size, 0) < 0) {
        free(p);
        return NULL;
    }
    return p;
}

void *newglibc_dup(const void *src, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p && n)
        memcpy(p, src, n);
    return p;
}
