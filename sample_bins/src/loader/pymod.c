/* linkaudit loader fixture: pyext mod.cpython-311-x86_64-linux-gnu.so.
 * No Python headers: PyModule_Create2 and PyLong_FromLong are declared here
 * and left undefined, as in a real extension module (the interpreter
 * provides them; no DT_NEEDED does). */
struct PyModuleDef_stub { const char *name; long size; };

extern void *PyModule_Create2(void *def, int apiver);
extern void *PyLong_FromLong(long v);
extern long helper_scale(long x);

static struct PyModuleDef_stub module_def = { "mod", -1 };

void *PyInit_mod(void)
{
    void *m = PyModule_Create2(&module_def, 1013);
    if (m && !PyLong_FromLong(helper_scale(4)))
        return (void *)0;
    return m;
}
