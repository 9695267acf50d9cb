/* libb.so: the leaf. */
int b_value(void) { return 41; }
