// objects/cpp_comdat/spec_a.o
#include "twice.h"

// Strong definition of the specialization; spec_b.cpp has another one.
template <>
int twice<int>(int x)
{
    return 2 * x;
}

int spec_a_user(int x)
{
    return helper(x) + static_cast<int>(twice<long>(x));
}
