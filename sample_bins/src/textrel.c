/* Built without -fPIC for i386: the code addresses `counter` absolutely, so the
 * shared object needs relocations in its text segment (DT_TEXTREL). */
int counter;

int bump(void)
{
    return ++counter;
}
