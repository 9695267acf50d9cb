/* linkaudit loader fixture: versions lib/libunversioned.so, linked against an
 * unversioned libprov.so: its reference to prov_a carries no version. */
extern int prov_a(int x);

int unversioned(int x) { return prov_a(x) * 2; }
