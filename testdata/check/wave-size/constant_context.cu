// Lane and warp arithmetic in a constant expression (array size, `constexpr`,
// `static_assert`) is reported like any other; its fix is a constant, never
// `warpSize` (see `explain wave-size`).
template <int N> __device__ float first(const float* s) { return s[N]; }
__global__ void k(const float* in, float* out) {
  constexpr int kBlockSize = 256;
  constexpr int kWarps = kBlockSize / 32;
  // ~^ diag: wave-size
  static_assert(kBlockSize % 32 == 0, "whole warps");
  // ~^ diag: wave-size
  __shared__ float partial[kBlockSize / 32];
  // ~^ diag: wave-size
  out[blockIdx.x] = first<kWarps>(partial) + in[kWarps];
#if defined(__gfx90a__) || defined(__gfx942__)
  __shared__ float wave64[kBlockSize / 32];
  // ~^ diag: wave-size
  out[0] = wave64[0];
#endif
}
