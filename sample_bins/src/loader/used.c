/* linkaudit loader fixture: unused_needed libused.so. */
int used_value(int x) { return x << 1; }
