/* member second.o of objects/archive_one/libone.a: member_fn again (after
   first.o, so a reference to member_fn alone pulls first.o) and only_second. */
int member_fn(void)
{
    return 2;
}

int only_second(void)
{
    return 22;
}
