/* objects/strong_pair/b.o: the same two strong symbols as a.c. */
int dup_counter = 2;

int dup_fn(int x)
{
    return x * dup_counter;
}
