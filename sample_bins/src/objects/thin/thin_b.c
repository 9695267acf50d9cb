/* objects/thin/thin_b.o: a member of the thin archive libthin.a, stored beside it. */
int thin_b_fn(void)
{
    return 2;
}
