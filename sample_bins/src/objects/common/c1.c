/* objects/common/c1_common.o (-fcommon), c1_nocommon.o (-fno-common). */
#include "counter.h"

void c1_add(int n)
{
    shared_total += n;
}
