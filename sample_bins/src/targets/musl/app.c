/* A musl program that calls into liba.so (and, through it, libb.so). */
int a_value(void);
int main(void) { return a_value(); }
