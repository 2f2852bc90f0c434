// A CUDA program no one here wrote the runtime of: NVIDIA's libcudart, shared or static, brings
// itself up through dlopen("libcuda.so.1") + dlsym("cuGetProcAddress_v2") + ~440 lookups. Against
// the simulated driver it cannot get past start-up (cudart needs private driver tables), but every
// entry point it resolves must come back through the shim. Prints what cudaMalloc returned.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(int *p) { p[threadIdx.x] = threadIdx.x; }

int main()
{
    int *p = nullptr;
    cudaError_t e = cudaMalloc(&p, 1 << 20);
    std::printf("cudaMalloc -> %d (%s)\n", (int)e, cudaGetErrorName(e));
    if (e == cudaSuccess) {
        touch<<<1, 32>>>(p);
        e = cudaDeviceSynchronize();
        std::printf("launch+sync -> %d\n", (int)e);
        cudaFree(p);
    }
    return 0;
}
