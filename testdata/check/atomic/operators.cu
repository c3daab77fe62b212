// Overloaded operators are calls: `c += v`, `++c`, `c[i]` and `c = v` on a variable of a class of the
// unit run that class's operators (an atomic, a barrier behind them); read-modify-write
// operators of `cuda::atomic_ref` / `cuda::std::atomic` are atomics. Operators of scalars,
// vector types and classes whose operators only compute do not block.
#include <hip/hip_runtime.h>
#include <cuda/atomic>

struct Counter {
  int* p;
  __device__ void operator+=(int v) { atomicAdd(p, v); }
  __device__ Counter& operator++() { atomicAdd(p, 1); return *this; }
};

struct Synced {
  const float* p;
  __device__ float operator[](int i) const { __syncthreads(); return p[i]; }
};

struct Exchanger {
  int* p;
  __device__ Exchanger& operator=(int v) { atomicExch(p, v); return *this; }
};

struct Acc {
  float v;
  __device__ Acc operator+(const Acc& o) const { return Acc{v + o.v}; }
  __device__ bool operator<(const Acc& o) const { return v < o.v; }
};

// A free operator of the unit that takes the class.
struct Tally {
  int* p;
};
__device__ Tally& operator<<(Tally& t, int v) { atomicAdd(t.p, v); return t; }

template <class C>
__device__ void bump(C& c, int n) {
  for (int i = 0; i < n; ++i) c += i;  // ~ blockers: atomic
}

__global__ void operators(int* q, const float* in, float* out, int n) {
  Counter c{q};
  for (int i = 0; i < n; ++i) c += i;  // ~ blockers: atomic
  for (int i = 0; i < n; ++i) ++c;  // ~ blockers: atomic
  Synced s{in};
  float sum = 0.f;
  for (int i = 0; i < n; ++i) sum += s[i];  // ~ blockers: barrier
  Acc a{0.f}, b{1.f};
  for (int i = 0; i < n; ++i) a = a + b;  // ~ blockers: none
  for (int i = 0; a < b && i < n; ++i) a = a + b;  // ~ blockers: none
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int i = 0; i < n; ++i) v.x += in[i];  // ~ blockers: none
  Tally t{q};
  for (int i = 0; i < n; ++i) t << i;  // ~ blockers: atomic
  bump(c, n);
  cuda::atomic_ref<int, cuda::thread_scope_device> r(q[1]);
  for (int i = 0; i < n; ++i) r += i;  // ~ blockers: atomic
  cuda::std::atomic<int> flag;
  for (int i = 0; i < n; ++i) flag++;  // ~ blockers: atomic
  Exchanger x{q};
  for (int i = 0; i < n; ++i) x = i;  // ~ blockers: atomic
  out[0] = sum + a.v + v.x;
}
