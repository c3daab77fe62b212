// Where `warpSize` cannot go (an array size, a `constexpr`), the fix is the project's
// own per-platform constant; elsewhere `warpSize`. The CUDA branch is never compiled on AMD.
#ifdef __HIP_PLATFORM_AMD__
#define WARP_SIZE 64
#else
#define WARP_SIZE 32
#endif
template <int N> __device__ float sum(const float* s) { return s[N - 1]; }
__global__ void warps(const float* in, float* out) {
  constexpr int kBlockSize = 256;
  __shared__ float partial[kBlockSize / 32];
  int lane = threadIdx.x % 32;
  partial[threadIdx.x / 32] = in[lane];
  constexpr int kWarps = kBlockSize / 32;
  out[blockIdx.x] = sum<kWarps>(partial);
}
