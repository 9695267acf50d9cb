/* linkaudit loader fixture: soname_reuse `app`; NEEDs libfirst.so, then
 * libsecond.so (this order matters: breadth-first loading). */
extern int first_value(void);
extern int second_value(void);

int main(void) { return (first_value() + second_value()) & 1; }
