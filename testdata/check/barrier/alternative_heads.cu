// Conditional groups whose alternatives each open a brace: one statement's head per platform
// or feature (FlashInfer's `#if SPEC_DEC` / `if (r >= n) {` / `#else` / `if (m >= rows) {` /
// `#endif`, RCCL's `if constexpr (...) {` under `__cpp_if_constexpr`). The grammar reads each
// branch alone, and the second unbalanced `{` broke the parse of the function: these loops, a
// barrier loop among them, were never reported. The group is read as its first branch when
// every other branch only heads a statement (calls nothing, jumps nowhere); otherwise it is
// left as it is. So are NCCL's groups inside an expression's parentheses, a group that ends
// with an `else` completed after it, and `if NCCL_IF_CONSTEXPR (c)` (a macro that is
// `constexpr` or nothing): each broke the parse of the rest of the function.
// hip-unroll-test: parse-errors 0

__device__ void drain(float* s) {
  s[threadIdx.x] = 0.f;
  __syncthreads();
}

__global__ void alternative_heads(float* p, float* s, int n, int rows, int r) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: early-exit
#if SPEC_DEC
    if (r >= n) {
#else
    if (i >= rows && r > 2) {
#endif
      break;
    }
    p[i] = 1.0f;
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
#if __cpp_if_constexpr
    if constexpr (sizeof(float) > 2) {
#elif WIDE
    if (sizeof(float) > 2 && rows > 0) {
#else
    if (sizeof(float) > 2) {
#endif
      p[i] += 2.0f;
      drain(s);
    }
  }
  for (int j = 0; j < 8; ++j) {  // ~ blockers: none
#if WIDE
    for (int i = 0; i < n; i += 2) {  // ~ blockers: none
#else
    for (int i = 0; i < n; ++i) {
#endif
      p[i * j] *= 0.5f;
    }
  }
}

__device__ int pick(int lane, bool tma) {
  return tma ? 0 : lane;
}

__global__ void nccl_style(float* p, float* s, int n, int lane, bool tma) {
  int base = 4 * (
#if __CUDA_ARCH__ >= 1000
      tma ? 0 :
#endif
      lane);
  int pre =
#if __CUDA_ARCH__ >= 1000
      (tma && base % 256 == 0) ? (256 - base) % 256 :
#endif
      (16 - base) % 16;
  for (int i = pre; i < n; ++i) {  // ~ blockers: barrier
    if NCCL_IF_CONSTEXPR (sizeof(float) == 4) {
      p[base + i] = 0.f;
    }
    drain(s);
  }
  if (n > 0) {
#if __CUDA_ARCH__ >= 1000
    if (tma) {
      p[0] = 1.f;
    } else
#endif
    {
      for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
        p[i] += pick(lane,
#if WIDE
                     tma
#else
                     false
#endif
        );
        drain(s);
      }
    }
  }
  for (int i = 0; i < 8; ++i) p[i] *= 2.f;  // ~ blockers: none
}
