// A macro defined nowhere in the file, in front of a function's declarator
// (`CUTLASS_DEVICE void f()`, `DS_D_INLINE T g()`, on methods too), is an unknown specifier:
// the function is parsed as a `__device__` one, its loops are reported and guarded, and the
// calls to it are followed. An attribute in front changes nothing (`[[nodiscard]]
// _CCCL_DEVICE T f()`, CCCL's style: such functions were lost with two parse errors each),
// nor does a requires-clause after the template parameters.
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

template <typename T>
[[nodiscard]] _CCCL_DEVICE _CCCL_FORCEINLINE T reduce_sync(T* s, int n) {
  T acc = 0;
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    acc += s[i];
    __syncthreads();
  }
  return acc;
}

[[nodiscard]] [[maybe_unused]] _CCCL_DEVICE float lane_sum(const float* v) {
  float acc = 0.f;
  for (int i = 0; i < 4; ++i) acc += v[i];  // ~ blockers: none
  // ~^ trip: 4
  return acc;
}

template <typename T>
  requires is_arithmetic_v<T> && (sizeof(T) >= 4)
_CCCL_DEVICE void fill_sync(T* s, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    s[i] = T(0);
    __syncthreads();
  }
}

// CCCL's kernels: the clause between directives, an unknown kernel-attribute macro.
template <typename T>
#if _CCCL_HAS_CONCEPTS()
  requires is_arithmetic_v<T>
#endif // _CCCL_HAS_CONCEPTS()
_CCCL_KERNEL_ATTRIBUTES __launch_bounds__(256) void constrained_kernel(T* s, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    s[i] = T(0);
    __syncthreads();
  }
  for (int i = 0; i < n; ++i) s[i] += T(1);  // ~ blockers: none
}

// An alignment or a macro call between `struct` and the name (tiny-cuda-nn's
// `struct alignas(16) mma_frag`) keeps the body a class body.
template <int N>
struct alignas(16) Fragment {
  float v[N];
  CUTLASS_DEVICE void store_sync(float* s) {
    for (int i = 0; i < N; ++i) {  // ~ blockers: barrier
      s[i] = v[i];
      __syncthreads();
    }
  }
  CUTLASS_DEVICE float sum() const {
    float acc = 0.f;
    for (int i = 0; i < N; ++i) acc += v[i];  // ~ blockers: none
    return acc;
  }
};

struct TILE_ALIGN(16) Tile {
  float v[8];
  CUTLASS_DEVICE void publish(float* s) {
    for (int i = 0; i < 8; ++i) {  // ~ blockers: barrier
      s[i] = v[i];
      __syncthreads();
    }
  }
};

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
  for (int i = 0; i < n; ++i) a[i] = reduce_sync(s, 4);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = lane_sum(s + i);  // ~ blockers: none
  for (int i = 0; i < n; ++i) fill_sync(s, 4);  // ~ blockers: barrier
  Fragment<4> frag;
  for (int i = 0; i < n; ++i) frag.store_sync(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = frag.sum();  // ~ blockers: none
  Tile tile;
  for (int i = 0; i < n; ++i) tile.publish(s);  // ~ blockers: barrier
}
