// A macro defined nowhere in the file, in front of a function's declarator
// (`CUTLASS_DEVICE void f()`, `DS_D_INLINE T g()`, on methods too), is an unknown specifier:
// the function is parsed as a `__device__` one, its loops are reported and guarded, and the
// calls to it are followed.
CUTLASS_DEVICE void sync_tile(float* s) {
  s[threadIdx.x] = 0.f;
  __syncthreads();
}

template <typename T>
DS_D_INLINE T warp_sum(T v) { return v + __shfl_xor(v, 1); }

DS_D_INLINE float* row_of(float* base, int r) {
  for (int k = 0; k < r; ++k) base += 4;  // ~ blockers: none
  return base;
}

struct Epilogue {
  float* s;
  CUTLASS_DEVICE void apply(int n) {
    for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
      s[i] *= 2.f;
      __syncthreads();
    }
  }
  CUTLASS_HOST_DEVICE float scale() const { return 2.f; }
  CUTLASS_DEVICE Epilogue(float* p) : s(p) {}
};

__global__ void uses_unknown_specifiers(float* a, float* s, int n) {
  Epilogue e(s);
  for (int i = 0; i < n; ++i) sync_tile(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = warp_sum(a[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) e.apply(4);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] *= e.scale();  // ~ blockers: none
}
