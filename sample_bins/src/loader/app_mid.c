/* linkaudit loader fixture: `app` of the RPATH/RUNPATH scenarios; NEEDs
 * libmid.so (which NEEDs libleaf.so). */
extern int mid_value(int x);

int main(int argc, char **argv)
{
    (void)argv;
    return mid_value(argc) & 1;
}
