/* member x.o of objects/archive_two/libx.a: cross_fn (also in liby.a's y.o)
   and x_only. */
int cross_fn(void)
{
    return 10;
}

int x_only(void)
{
    return 11;
}
