// A register-heavy loop for the occupancy gate (tests/tune_occupancy.rs, tuner/tests/gates.rs):
// five float4 accumulators fed by five loads per iteration. On gfx90a (hipcc -O3) the loop
// as written needs 56 VGPRs (8 waves per SIMD); `#pragma unroll 4` keeps four iterations'
// loads in flight, 76 VGPRs: 6 waves per SIMD, no spill, no scratch. `#pragma unroll 2`
// stays at 64 VGPRs (8 waves).
#include <hip/hip_runtime.h>

__global__ void occ(const float4* __restrict__ a, float* __restrict__ out, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float4 s0 = make_float4(0.f, 0.f, 0.f, 0.f);
    float4 s1 = make_float4(0.f, 0.f, 0.f, 0.f);
    float4 s2 = make_float4(0.f, 0.f, 0.f, 0.f);
    float4 s3 = make_float4(0.f, 0.f, 0.f, 0.f);
    float4 s4 = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int j = 0; j < n; ++j) {
        { float4 v = a[(j * 5 + 0) * 256 + t]; s0.x += v.x * v.y; s0.y += v.y * v.z; s0.z += v.z * v.w; s0.w += v.w * v.x; }
        { float4 v = a[(j * 5 + 1) * 256 + t]; s1.x += v.x * v.y; s1.y += v.y * v.z; s1.z += v.z * v.w; s1.w += v.w * v.x; }
        { float4 v = a[(j * 5 + 2) * 256 + t]; s2.x += v.x * v.y; s2.y += v.y * v.z; s2.z += v.z * v.w; s2.w += v.w * v.x; }
        { float4 v = a[(j * 5 + 3) * 256 + t]; s3.x += v.x * v.y; s3.y += v.y * v.z; s3.z += v.z * v.w; s3.w += v.w * v.x; }
        { float4 v = a[(j * 5 + 4) * 256 + t]; s4.x += v.x * v.y; s4.y += v.y * v.z; s4.z += v.z * v.w; s4.w += v.w * v.x; }
    }
    out[t] = s0.x + s0.y + s0.z + s0.w + s1.x + s1.y + s1.z + s1.w + s2.x + s2.y + s2.z + s2.w
        + s3.x + s3.y + s3.z + s3.w + s4.x + s4.y + s4.z + s4.w;
}
