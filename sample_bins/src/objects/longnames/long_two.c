/* member a_very_long_member_name_two.o of objects/longnames/liblong.a. */
int long_two_fn(void)
{
    return 2;
}
