/* member y.o of objects/archive_two/liby.a: cross_fn (also in libx.a's x.o)
   and y_only. */
int cross_fn(void)
{
    return 20;
}

int y_only(void)
{
    return 21;
}
