/* linkaudit loader fixture: versions `app_old`; NEEDs libprov.so (the old
 * release, found first) and libuses_new.so. */
extern int prov_a(int x);
extern int uses_new(int x);

int main(int argc, char **argv)
{
    (void)argv;
    return (prov_a(argc) + uses_new(argc)) & 1;
}
