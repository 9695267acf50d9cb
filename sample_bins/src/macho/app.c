/* linkaudit fixture: a Mach-O executable (misc/exe/bin/app) whose LC_RPATH @executable_path/../lib
 * finds libtorch_cuda.dylib; @executable_path is its own directory.  Never run. */
int torch_cuda_compile(const char *src);

int main(void)
{
    return torch_cuda_compile("");
}
