// Fixture for the `check` formats: every line below that should be reported says so.
#include <hip/hip_runtime.h>

__device__ void step(float* tile) {
    tile[threadIdx.x] *= 2.0f;
    __syncthreads();
}

__global__ void scale(float* data, int* count, int n) {
    __shared__ float tile[256];
    tile[threadIdx.x] = data[threadIdx.x];
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // unroll-blocked: barrier through step()
        step(tile);
    }
#pragma unroll 2
    for (int i = 0; i < n; ++i) {  // unroll-blocked: atomic
        atomicAdd(count, 1);
    }
    for (int i = 0; i < 8; ++i) {  // candidate
        data[i] += tile[i];
    }
}

__global__ void search(const int* keys, int n, int key, int* where) {
#pragma unroll
    for (int i = 0; i < n; ++i) {  // unroll-blocked: early exit
        if (keys[i] == key) {
            *where = i;
            return;
        }
    }
}

__global__ void wave(float* out) {
    float v = out[threadIdx.x];
    v += __shfl_down(v, 16, 32);  // wave-size
    out[threadIdx.x] = v;
}
