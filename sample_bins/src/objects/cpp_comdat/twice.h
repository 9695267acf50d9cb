// objects/cpp_comdat/: shared header of spec_a.cpp, spec_b.cpp, main_cpp.cpp.
#ifndef LINKAUDIT_TWICE_H
#define LINKAUDIT_TWICE_H

// Primary template: each implicit instantiation (twice<long>) is a weak
// symbol in its own COMDAT group, so one copy per object is fine.
// noinline keeps the out-of-line copy at -O1.
template <typename T>
__attribute__((noinline)) T twice(T x)
{
    return x + x;
}

// Explicit specialization, declared here and defined (not inline) in BOTH
// spec_a.cpp and spec_b.cpp: an ordinary strong symbol, _Z5twiceIiET_S0_,
// so linking the two together fails (an ODR violation that ld does catch).
template <>
int twice<int>(int x);

// Inline function: weak, COMDAT group _Z6helperi, fine in every object.
__attribute__((noinline)) inline int helper(int x)
{
    return x * 3 + 1;
}

#endif
