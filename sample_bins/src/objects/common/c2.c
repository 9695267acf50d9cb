/* objects/common/c2_common.o (-fcommon), c2_nocommon.o (-fno-common). */
#include "counter.h"

void c2_add(int n)
{
    shared_total += 2 * n;
}
