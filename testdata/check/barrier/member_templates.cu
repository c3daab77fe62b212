// Member templates called with the `template` keyword (`x.template f<N>()`,
// `p->template f<N>()`, `T::template f<N>()`) and static members of class templates
// (`S<T>::f()`) are calls like any other: a barrier in them blocks the loop.
template <int Width>
struct RowStats {
  float* s;
  template <bool Sync>
  __device__ float compute(float x) {
    s[threadIdx.x] = x;
    if (Sync) __syncthreads();
    return s[0];
  }
  template <int K>
  __device__ float scaled(float x) const { return x * K; }
};

template <typename T>
struct Tile {
  template <int N>
  __device__ static void load(T* dst, const T* src) {
    dst[threadIdx.x] = src[threadIdx.x * N];
    __syncthreads();
  }
  __device__ static T zero() { return T(0); }
};

template <class Stage>
__device__ void run_stage(float* dst, const float* src) {
  Stage::template load<2>(dst, src);
}

__global__ void member_templates(float* a, float* s, int n) {
  RowStats<128> stats{s};
  RowStats<128>* ps = &stats;
  for (int i = 0; i < n; ++i) a[i] = stats.template compute<true>(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = ps->template compute<true>(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = stats.compute<true>(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) Tile<float>::template load<4>(s, a);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) run_stage<Tile<float>>(s, a);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] += Tile<float>::zero();  // ~ blockers: none
  for (int i = 0; i < n; ++i) a[i] = stats.template scaled<3>(a[i]);  // ~ blockers: none
}
