// GPU kit: a CUDA C++ program built with nvcc's default static cudart. cudaMalloc/cudaFree and
// <<<>>> reach the driver only through cudart's cuGetProcAddress table.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

int main()
{
    const int n = 1 << 20;
    float *buf[10];
    for (int i = 0; i < 10; i++)
        if (cudaMalloc(&buf[i], n * sizeof(float)) != cudaSuccess) return 1;
    for (int step = 0; step < 50; step++) scale<<<n / 256, 256>>>(buf[step % 10], 1.0001f, n);
    for (int i = 0; i < 5; i++) cudaFree(buf[i]);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    std::printf("expect allocs>=10 frees>=5 launches=50 kernels=50 peak>=%d\n", 10 * n * 4);
    return 0;
}
