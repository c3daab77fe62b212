// hip-unroll's on-device comparison for AMD GPUs: sets *flag to 1 when the first n bytes at a
// and b differ (a grid-stride loop over 32-bit words; thread 0 of block 0 compares the bytes
// after the last whole word). Compiled at run time by hiprtc for the device's architecture
// (runner/src/hip/rtc.rs); the same contract as runner/src/cuda/differ.ptx.
extern "C" __global__ void hip_unroll_differ(const unsigned int* a, const unsigned int* b,
                                             unsigned long long n, unsigned int* flag) {
    unsigned long long words = n / 4;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < words; i += stride) {
        if (a[i] != b[i]) {
            *flag = 1;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const unsigned char* x = (const unsigned char*)a;
        const unsigned char* y = (const unsigned char*)b;
        for (unsigned long long j = words * 4; j < n; ++j) {
            if (x[j] != y[j]) {
                *flag = 1;
            }
        }
    }
}
