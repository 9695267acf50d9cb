/* linkaudit fixture: looks like a CPython extension module (_C.cpython-311-
 * x86_64-linux-gnu.so).  No Python headers are needed: only the exported
 * PyInit__C name and the link to libshim.so matter. */
struct PyModuleDef_stub { const char *name; int (*checksum)(const char *); };

extern int shim_checksum(const char *data);
extern const char *shim_version(void);

static struct PyModuleDef_stub module_def = { "_C", shim_checksum };

void *PyInit__C(void)
{
    if (shim_checksum(shim_version()) < 0)
        return (void *)0;
    return &module_def;
}
