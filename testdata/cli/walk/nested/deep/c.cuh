// Walk fixture: one kernel with a blocked pragma loop; whether it is reported shows whether the walk reached this file.
__global__ void k(float* t) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        t[i] = 0.0f;
        __syncthreads();
    }
}
