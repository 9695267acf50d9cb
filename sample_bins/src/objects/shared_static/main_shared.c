/* objects/shared_static/main_shared.o: calls util_fn, which libfirst.so and
   libsecond.so both export (ld takes the first and reports nothing). */
int util_fn(int x);
int first_api(int x);
int second_api(int x);

int main(void)
{
    return util_fn(0) + first_api(0) + second_api(0);
}
