/* linkaudit loader fixture: libprov.so of the versions scenario.
 * Built three ways (SONAME libprov.so each time):
 *   full        : prov_a@@PROV_1.0, prov_b@@PROV_2.0   (prov.map)
 *   -DPROV_OLD  : prov_a@@PROV_1.0 only                 (prov_old.map)
 *   unversioned : prov_a, prov_b without versions (no version script;
 *                 only used at link time, never shipped) */
int prov_a(int x) { return x + 1; }

#ifndef PROV_OLD
int prov_b(int x) { return x + 2; }
#endif
