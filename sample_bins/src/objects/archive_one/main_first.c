/* objects/archive_one/main_first.o: needs member_fn only, so ld pulls only
   first.o out of libone.a: the link succeeds. */
int member_fn(void);

int main(void)
{
    return member_fn();
}
