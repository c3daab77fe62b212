// hip-unroll-test: loop=7 factor=2 mode=manual
// A typedef'd index type (defined in a header the transform cannot see) and a grid stride.
typedef long long local_int_t;
__global__ void fill(float* a, local_int_t n) {
    local_int_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    local_int_t inc = blockDim.x * gridDim.x;
    for (local_int_t idx = gid; idx < n; idx += inc) {
        a[idx] = 1.0f;
    }
}
