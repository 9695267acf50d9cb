// objects/stacked/main_stacked.o: calls the kernel.
namespace at {
namespace native {
void activation_kernel_DEFAULT(float* data, int n);
}  // namespace native
}  // namespace at

int main()
{
    float v[2] = {-1.0f, 1.0f};
    at::native::activation_kernel_DEFAULT(v, 2);
    return v[0] == 0.0f ? 0 : 1;
}
