/* order2.lib's member: first_fn, calling shared_fn (see order_main.c). */
int shared_fn(void);
int first_fn(void) { return shared_fn(); }
