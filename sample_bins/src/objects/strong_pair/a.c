/* objects/strong_pair/a.o: strong dup_fn and strong initialised dup_counter.
   b.c defines both again, so "gcc main.o a.o b.o" fails (multiple definition). */
int dup_counter = 1;

int dup_fn(int x)
{
    return x + dup_counter;
}
