// A pointer into dynamic shared memory returned by a function or a method (`extern __shared__`
// declared inside it: the CUDA samples' `SharedMemory<T>`), then cast or offset, is dynamic
// shared memory wherever it is used. A helper that returns a pointer into a static
// `__shared__` array does not block.
template <class T>
struct SharedMemory {
  __device__ T* getPointer() {
    extern __shared__ int __smem[];
    return (T*)__smem;
  }
  __device__ operator T*() {
    extern __shared__ int __smem[];
    return (T*)__smem;
  }
};

template <>
struct SharedMemory<double> {
  __device__ double* getPointer() {
    extern __shared__ double __smem_d[];
    return (double*)__smem_d;
  }
};

__device__ float* dyn_base() {
  extern __shared__ float dyn[];
  return dyn;
}

__device__ float* dyn_row(int r) { return dyn_base() + r * 32; }

__device__ float* static_tile() {
  __shared__ float tile[256];
  return tile;
}

template <class T>
__global__ void reduce(const T* in, T* out, int n) {
  T* sdata = SharedMemory<T>();
  for (int i = 0; i < n; ++i) sdata[threadIdx.x] += in[i];  // ~ blockers: dynamic-lds
  out[blockIdx.x] = sdata[0];
}

__global__ void returned(const float* in, float* out, int n) {
  SharedMemory<float> smem;
  float* s = smem.getPointer();
  float4* v = reinterpret_cast<float4*>(smem.getPointer()) + 2;
  float* row = dyn_row(threadIdx.y) + 4;
  float* p;
  p = dyn_base();
  float* t = static_tile();
  for (int i = 0; i < n; ++i) s[i] = in[i];  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) v[i].x = in[i];  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) row[i] = in[i];  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) p[i] = in[i];  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) t[i] = in[i];  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = in[i];  // ~ blockers: none
}

__global__ void returned_double(const double* in, double* out, int n) {
  SharedMemory<double> smem;
  double* s = smem.getPointer();
  for (int i = 0; i < n; ++i) s[i] = in[i];  // ~ blockers: dynamic-lds
}
