// Explicit and partial class template specialisations are different classes: a call on
// `Traits<float>::Reducer` reaches that specialisation's members, not those of
// `Traits<int>::Reducer`, though both are named `Traits::Reducer::run` once their template
// arguments are left out. Arguments are told apart only where both are certain (built-in types,
// integer literals); a typedef (`int32_t`, `real_t`), a parameter or an expression may be any
// of them, and a specialisation that derives from another of its own template may inherit its
// members: every candidate then, blocked.
#include <hip/hip_runtime.h>
#include <stdint.h>

template <typename T> struct Traits;
template <> struct Traits<float> {
  struct Reducer {
    __device__ float run(float v) { return v * 2.f; }
  };
};
template <> struct Traits<int> {
  struct Reducer {
    __device__ int run(int v) { __syncthreads(); return v; }
  };
};

// The primary does not sync; its `int` and `long long` specialisations do.
template <typename T> struct Box {
  __device__ T get(T v) { return v; }
  __device__ static T make() { return T(); }
};
template <> struct Box<int> {
  __device__ int get(int v) { __syncthreads(); return v; }
  __device__ static int make() { __syncthreads(); return 0; }
};
template <> struct Box<long long> {
  __device__ long long get(long long v);
};
__device__ long long Box<long long>::get(long long v) { __syncthreads(); return v; }

// Non-type arguments.
template <int N> struct Tile {
  __device__ void load() {}
};
template <> struct Tile<8> {
  __device__ void load() { __syncthreads(); }
};

// A constructor that syncs, in one specialisation only.
template <typename T> struct Guard {
  __device__ Guard() {}
};
template <> struct Guard<int> {
  __device__ Guard() { __syncthreads(); }
};

// Unqualified calls in a specialisation's members are calls of its own members.
template <typename T> struct Acc;
template <> struct Acc<float> {
  __device__ void step() {}
  __device__ float run(float v) {
    for (int i = 0; i < 4; ++i) { step(); v += 1.f; }  // ~ blockers: none
    return v;
  }
};
template <> struct Acc<int> {
  __device__ void step() { __syncthreads(); }
  __device__ int run(int v) {
    for (int i = 0; i < 4; ++i) { step(); v += 1; }  // ~ blockers: barrier
    return v;
  }
};

// A partial specialisation: `float*` matches `T*`, and `float` is not told from `T*` here.
template <typename T> struct Ptr {
  __device__ void touch() {}
};
template <typename T> struct Ptr<T*> {
  __device__ void touch() { __syncthreads(); }
};

// A specialisation that derives from another of the same template.
template <typename T> struct Vec {
  __device__ void sum() {}
};
template <> struct Vec<float> {
  __device__ void sum() { __syncthreads(); }
};
template <> struct Vec<int> : Vec<float> {};

// A member alias of a class template named with arguments: the class's parameters bound.
struct SyncFn {
  __device__ float operator()(float x) const { __syncthreads(); return x; }
};
struct QuietFn {
  __device__ float operator()(float x) const { return x; }
};
template <class T> struct Ident { using type = T; };

__device__ float through_member_alias(float v) {
  typename Ident<SyncFn>::type sync_op;
  for (int i = 0; i < 4; ++i) v = sync_op(v);  // ~ blockers: barrier
  Ident<QuietFn>::type quiet_op;
  for (int i = 0; i < 4; ++i) v = quiet_op(v);  // ~ blockers: none
  return v;
}

using real_t = int;
using FloatReducer = Traits<float>::Reducer;
using IntReducer = Traits<int>::Reducer;
using Reducer2 = FloatReducer;

// A parameter's declared type.
__device__ float by_parameter(const Box<float>& b, Box<int>* p, float v) {
  for (int i = 0; i < 4; ++i) v = b.get(v);  // ~ blockers: none
  for (int i = 0; i < 4; ++i) v += p->get(1);  // ~ blockers: barrier
  return v;
}

// Aliases of specialisations, and `auto` from a temporary.
__device__ float by_alias(float v, int w) {
  FloatReducer r;
  for (int i = 0; i < 4; ++i) v = r.run(v);  // ~ blockers: none
  Reducer2 r2;
  for (int i = 0; i < 4; ++i) v = r2.run(v);  // ~ blockers: none
  IntReducer ri;
  for (int i = 0; i < 4; ++i) w = ri.run(w);  // ~ blockers: barrier
  auto t = Traits<float>::Reducer{};
  for (int i = 0; i < 4; ++i) v = t.run(v);  // ~ blockers: none
  return v + w;
}

template <typename T>
__device__ T generic(T v) {
  Box<T> b;
  for (int i = 0; i < 4; ++i) v = b.get(v);  // ~ blockers: barrier
  return v;
}

__global__ void k(float* a, int* b, long long* c) {
  float v = a[threadIdx.x];
  int w = b[threadIdx.x];
  Traits<float>::Reducer r;
  for (int i = 0; i < 4; ++i) v = r.run(v);  // ~ blockers: none
  Traits<int>::Reducer ri;
  for (int i = 0; i < 4; ++i) w = ri.run(w);  // ~ blockers: barrier
  Box<float> bf;
  for (int i = 0; i < 4; ++i) v = bf.get(v);  // ~ blockers: none
  Box<int> bi;
  for (int i = 0; i < 4; ++i) w = bi.get(w);  // ~ blockers: barrier
  Box<unsigned> bu;
  for (int i = 0; i < 4; ++i) w = bu.get(w);  // ~ blockers: none
  Box<signed int> bs;
  for (int i = 0; i < 4; ++i) w = bs.get(w);  // ~ blockers: barrier
  Box<long> bl;
  for (int i = 0; i < 4; ++i) w = bl.get(w);  // ~ blockers: none
  Box<long long> bll;
  for (int i = 0; i < 4; ++i) c[i] = bll.get(c[i]);  // ~ blockers: barrier
  Box<int32_t> b32;
  for (int i = 0; i < 4; ++i) w = b32.get(w);  // ~ blockers: barrier
  Box<real_t> br;
  for (int i = 0; i < 4; ++i) w = br.get(w);  // ~ blockers: barrier
  for (int i = 0; i < 4; ++i) v += Box<float>::make();  // ~ blockers: none
  for (int i = 0; i < 4; ++i) w += Box<int>::make();  // ~ blockers: barrier
  Tile<4> t4;
  for (int i = 0; i < 4; ++i) t4.load();  // ~ blockers: none
  Tile<0x8> t8;
  for (int i = 0; i < 4; ++i) t8.load();  // ~ blockers: barrier
  Tile<2 * 4> te;
  for (int i = 0; i < 4; ++i) te.load();  // ~ blockers: barrier
  for (int i = 0; i < 4; ++i) { Guard<float> g; v += 1.f; }  // ~ blockers: none
  for (int i = 0; i < 4; ++i) { Guard<int> g; v += 1.f; }  // ~ blockers: barrier
  Ptr<float*> pp;
  for (int i = 0; i < 4; ++i) pp.touch();  // ~ blockers: barrier
  Ptr<float> pf;
  for (int i = 0; i < 4; ++i) pf.touch();  // ~ blockers: barrier
  Vec<int> vi;
  for (int i = 0; i < 4; ++i) vi.sum();  // ~ blockers: barrier
  a[threadIdx.x] = v + w + generic(v);
}
