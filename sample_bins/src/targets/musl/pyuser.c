/* A helper library of a Python package that no extension module needs: the package dlopens it.
   It calls the interpreter's C API, which only the interpreter (the main program) provides. */
extern void *PyLong_FromLong(long value);

void *pyuser_answer(void) { return PyLong_FromLong(42); }
