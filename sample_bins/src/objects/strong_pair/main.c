/* objects/strong_pair/main.o: calls dup_fn (defined by a.o and by b.o). */
int dup_fn(int x);

int main(void)
{
    return dup_fn(0);
}
