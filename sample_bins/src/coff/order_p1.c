/* order1.lib's member: shared_fn and dup_sym (which order_main.obj defines too). */
int dup_sym = 1;
int shared_fn(void) { return 1; }
