/* objects/lto/slim.o: gcc -flto -c gives a slim LTO object: the code is GIMPLE
   bytecode in .gnu.lto_* sections; .symtab holds only the file symbol and the
   COMMON marker __gnu_lto_slim, not lto_fn or lto_counter. */
int lto_counter = 7;

int lto_fn(int x)
{
    return x * lto_counter;
}
