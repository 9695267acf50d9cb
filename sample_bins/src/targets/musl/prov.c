/* libprov.so: defines v_value at the version named by the version script it is linked with. */
int v_value(void) { return 2; }
