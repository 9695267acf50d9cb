// aten/native/cpu/Activation.cpp: the real kernel source.
namespace at { namespace native {
void activation_kernel_DEFAULT(float* data, int n) {
  for (int i = 0; i < n; ++i) if (data[i] < 0.0f) data[i] = 0.0f;
}
} }
