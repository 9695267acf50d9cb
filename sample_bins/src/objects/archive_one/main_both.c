/* objects/archive_one/main_both.o: needs member_fn (first.o) and only_second
   (second.o): both members are pulled and member_fn is defined twice. */
int member_fn(void);
int only_second(void);

int main(void)
{
    return member_fn() + only_second();
}
