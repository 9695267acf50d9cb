/* linkaudit loader fixture: `app` of wrong_class and not_elf_candidate;
 * NEEDs libleaf.so directly. */
extern int leaf_value(int x);

int main(int argc, char **argv)
{
    (void)argv;
    return leaf_value(argc) & 1;
}
