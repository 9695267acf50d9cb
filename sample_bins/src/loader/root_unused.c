/* linkaudit loader fixture: unused_needed libroot.so; calls libused.so only. */
extern int used_value(int x);

int root_value(int x) { return used_value(x) + 1; }
