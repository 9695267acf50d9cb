/* objects/common/: included by c1.c and c2.c.  A tentative definition (no
   initialiser, no extern): with -fcommon it becomes a COMMON symbol in each
   object and ld merges them; with -fno-common (the default since GCC 10) each
   object has a strong .bss definition and the link fails. */
int shared_total;
