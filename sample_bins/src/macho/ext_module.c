/* linkaudit fixture: a Python extension module (_C.so, an MH_BUNDLE) whose LC_RPATH
 * @loader_path/lib is the only way dyld finds libtorch_cuda.dylib and, through it (which has no
 * LC_RPATH of its own), libnvrtc.12.dylib.  Never run. */
int torch_cuda_compile(const char *src);

int PyInit__C(void)
{
    return torch_cuda_compile("");
}
