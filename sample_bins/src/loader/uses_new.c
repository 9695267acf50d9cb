/* linkaudit loader fixture: versions lib/libuses_new.so, linked against the
 * full libprov.so: needs prov_a@PROV_1.0 and prov_b@PROV_2.0. */
extern int prov_a(int x);
extern int prov_b(int x);

int uses_new(int x) { return prov_a(x) + prov_b(x); }
