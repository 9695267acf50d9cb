/* linkaudit fixture: a Python extension module (_ext.pyd) calling one function of the
 * interpreter's DLL.  build_pe.sh links it against import libraries naming python312.dll,
 * python3.dll (the Stable ABI's, PEP 384), python313t.dll (free-threaded) and python312_d.dll
 * (debug): the DLL name is the only difference.  Never run. */
__declspec(dllimport) void *PyLong_FromLong(long value);

__declspec(dllexport) void *PyInit__ext(void)
{
    return PyLong_FromLong(1);
}
