/* Linked against libprov.so defining v_value@PROV_2, run against one defining it at PROV_1
 * only: glibc refuses ("version `PROV_2' not found"); musl binds by name and loads it. */
int v_value(void);
int main(void) { return v_value(); }
