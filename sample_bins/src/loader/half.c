/* linkaudit loader fixture: unresolved libhalf.so, defines half_present only. */
int half_present(int x) { return x - 1; }
