/* linkaudit fixture: a table of pointers gives many R_*_RELATIVE
 * relocations, which -z pack-relative-relocs packs into DT_RELR; the linker
 * then adds a verneed on GLIBC_ABI_DT_RELR that no symbol uses. */
#include <string.h>

static int op_add(int a, int b) { return a + b; }
static int op_sub(int a, int b) { return a - b; }
static int op_mul(int a, int b) { return a * b; }
static int op_and(int a, int b) { return a & b; }
static int op_or(int a, int b) { return a | b; }
static int op_xor(int a, int b) { return a ^ b; }
static int op_min(int a, int b) { return a < b ? a : b; }
static int op_max(int a, int b) { return a > b ? a : b; }

struct op { const char *name; int (*fn)(int, int); };

static const struct op ops[] = {
    { "add", op_add }, { "sub", op_sub }, { "mul", op_mul }, { "and", op_and },
    { "or", op_or },   { "xor", op_xor }, { "min", op_min }, { "max", op_max },
};

int relr_apply(const char *name, int a, int b)
{
    unsigned i;
    for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(ops[i].name, name) == 0)
            return ops[i].fn(a, b);
    return 0;
}
