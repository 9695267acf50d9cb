/* objects/archive_two/main_xy.o: x_only pulls x.o, y_only pulls y.o; both
   define cross_fn, so the link fails. */
int x_only(void);
int y_only(void);

int main(void)
{
    return x_only() + y_only();
}
