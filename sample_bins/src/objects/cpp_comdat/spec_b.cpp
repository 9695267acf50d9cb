// objects/cpp_comdat/spec_b.o
#include "twice.h"

// The same specialization again (same mangled name), defined differently.
template <>
int twice<int>(int x)
{
    return x << 1;
}

int spec_b_user(int x)
{
    return helper(x) - static_cast<int>(twice<long>(x));
}
