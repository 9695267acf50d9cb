/* member first.o of objects/archive_one/libone.a: member_fn only. */
int member_fn(void)
{
    return 1;
}
