// objects/stacked/: compiled twice, to Activation.cpp.DEFAULT.cpp.o and to
// Activation.cpp.DEFAULT.cpp.DEFAULT.cpp.o, as a stale generated tree would
// (the CPU-capability codegen wrapped its own output a second time).  Both
// objects define the same strong _ZN2at6native25activation_kernel_DEFAULTEPfi.
namespace at {
namespace native {

void activation_kernel_DEFAULT(float* data, int n)
{
    for (int i = 0; i < n; ++i) {
        if (data[i] < 0.0f) {
            data[i] = 0.0f;
        }
    }
}

}  // namespace native
}  // namespace at
