/* objects/archive_two/main_x.o: cross_fn and x_only, both from libx.a's x.o;
   nothing pulls y.o out of liby.a, so the link succeeds. */
int cross_fn(void);
int x_only(void);

int main(void)
{
    return cross_fn() + x_only();
}
