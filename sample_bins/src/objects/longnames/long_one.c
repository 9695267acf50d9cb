/* member a_very_long_member_name_one.o of objects/longnames/liblong.a. */
int long_one_fn(void)
{
    return 1;
}
