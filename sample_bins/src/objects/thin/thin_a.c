/* objects/thin/thin_a.o: a member of the thin archive libthin.a, stored beside it. */
int thin_a_fn(void)
{
    return 1;
}
