/* Assembled as a /bigobj object (ANON_OBJECT_HEADER_BIGOBJ) by GNU as -mbig-obj. */
extern int big_external(int);
int big_defined(int x) { return big_external(x) + 1; }
