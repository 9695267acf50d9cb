/* linkaudit fixture: a small PIE executable (has PT_INTERP). */
#include <stdio.h>

int main(int argc, char **argv)
{
    printf("hello from %s (%d args)\n", argc > 0 ? argv[0] : "?", argc);
    return 0;
}
