// hip-unroll-test: loop=7 factor=2 mode=manual
// A typedef'd index type (defined in a header the transform cannot see) and a grid stride.
typedef long long local_int_t;
__global__ void fill(float* a, local_int_t n) {
    local_int_t gid = blockIdx.x * blockDim.x + threadIdx.x;
    local_int_t inc = blockDim.x * gridDim.x;
    {
        local_int_t idx = gid;
        static_assert((decltype(idx))1 / 2 == 0 && sizeof(decltype(idx)) <= 8, "hip-unroll: `idx` must be an integer of at most 64 bits");
        const unsigned long long hu_unroll_7_step = (unsigned long long)(inc);
        for (; idx <= ((((decltype(idx))1 << (sizeof(decltype(idx)) * 8 - 2)) - 1) * 2 + 1) && hu_unroll_7_step <= (unsigned long long)(((((decltype(idx))1 << (sizeof(decltype(idx)) * 8 - 2)) - 1) * 2 + 1)) - (unsigned long long)(idx) && (idx >= 0 || ((decltype(idx))((unsigned long long)(idx) + hu_unroll_7_step)) < 0) && ((decltype(idx))((unsigned long long)(idx) + hu_unroll_7_step)) < n; idx += inc) {
            {
                a[idx] = 1.0f;
            }
            idx += inc;
            {
                a[idx] = 1.0f;
            }
        }
        for (; idx < n; idx += inc) {
            a[idx] = 1.0f;
        }
    }
}
