// objects/cpp_comdat/main_cpp.o: calls twice<int> (strong, in spec_a.o and
// spec_b.o), twice<long> and helper (COMDAT, also emitted here).
#include "twice.h"

int main()
{
    return twice<int>(1) + helper(2) + static_cast<int>(twice<long>(3L));
}
