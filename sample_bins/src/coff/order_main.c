/* Library search order (issue 17): the object calls first_fn (in order2.lib's member), whose
   shared_fn both order1.lib and order3.lib define.  link.exe searches the library the member came
   from, then the following ones (order3.lib); lld-link takes the first library that defines it
   (order1.lib), whose member also defines dup_sym: a duplicate under lld-link's order only. */
int first_fn(void);
int dup_sym = 7;
int order_main(void) { return first_fn() + dup_sym; }
