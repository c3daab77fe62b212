// An object whose constructor points a data member into dynamic shared memory holds it: every
// use of the object in a loop may touch it (`s[i]` through its operator, `s.p[i]` directly). An
// object of a class whose constructor uses static shared memory only does not block. So does an
// object one of whose methods stores such a pointer in a member (`bind()`), not one whose method
// only reads dynamic shared memory into a local (`peek()`).
#include <hip/hip_runtime.h>

template <class T>
struct DynTile {
  T* p;
  __device__ DynTile() {
    extern __shared__ unsigned char raw[];
    p = reinterpret_cast<T*>(raw);
  }
  __device__ T& operator[](int i) { return p[i]; }
};

struct StaticTile {
  float* p;
  __device__ StaticTile() {
    __shared__ float tile[256];
    p = tile;
  }
};

struct Bound {
  float* p;
  int n;
  __device__ void bind(int off) {
    extern __shared__ float dyn[];
    this->p = dyn + off;
  }
};

struct Peeker {
  float* q;
  __device__ float peek(int i) {
    extern __shared__ float dyn2[];
    float* local = dyn2;
    return local[i];
  }
};

__device__ float sum_of(DynTile<float>& t, int n) {
  float s = 0.f;
  for (int i = 0; i < n; ++i) s += t[i];  // ~ blockers: dynamic-lds
  return s;
}

__global__ void tiles(const float* in, float* out, int n) {
  DynTile<float> s;
  for (int i = 0; i < n; ++i) s[i] = in[i];  // ~ blockers: dynamic-lds
  for (int i = 0; i < n; ++i) s.p[i] += 1.f;  // ~ blockers: dynamic-lds
  StaticTile st;
  for (int i = 0; i < n; ++i) st.p[i % 256] = in[i];  // ~ blockers: none
  Bound b;
  b.bind(4);
  for (int i = 0; i < n; ++i) b.p[i] = in[i];  // ~ blockers: dynamic-lds
  Peeker pk{out};
  for (int i = 0; i < n; ++i) pk.q[i] = in[i];  // ~ blockers: none
  out[0] = sum_of(s, n);
}
