/* order3.lib's member: shared_fn alone. */
int shared_fn(void) { return 3; }
