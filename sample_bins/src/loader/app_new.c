/* linkaudit loader fixture: versions `app_new`; NEEDs libuses_new.so and
 * libunversioned.so. */
extern int uses_new(int x);
extern int unversioned(int x);

int main(int argc, char **argv)
{
    (void)argv;
    return (uses_new(argc) + unversioned(argc)) & 1;
}
