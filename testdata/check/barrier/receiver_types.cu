// Calls are resolved by the receiver's static type where the file shows it: a warp reducer's
// `allreduce` only shuffles, a block reducer's of the same name synchronises; only the block
// reducer's callers are blocked. The type comes from a variable's or parameter's declaration,
// `auto x = T(...)`/`T{...}` (also with `decltype(...)` among `T`'s template arguments), a data
// member (`red.f()`, `this->red.f()`), an alias, a base
// class, or a template parameter that the call binds. Where the type is unknown (a parameter of
// an unbound template), every `allreduce` of the file is a candidate: blocked.
struct WarpReduce {
  __device__ float allreduce(float x) const { return x + __shfl_xor(x, 1); }
};

struct BlockReduce {
  float* smem;
  __device__ float allreduce(float x) {
    smem[threadIdx.x] = x;
    __syncthreads();
    return smem[0];
  }
};

struct RowReduce : BlockReduce {};

// A class template whose arguments include `decltype(...)`: the class is still known.
template <class T, int N>
struct TileWarp {
  __device__ float allreduce(float x) const { return x + __shfl_xor(x, N); }
};

// A member alias named like the class template it names: its right side is the outer one.
template <class T>
struct Rows {
  using TileWarp = TileWarp<T, 1>;
  __device__ static float sum(const float* x, int n) {
    float s = 0.f;
    auto w = TileWarp();
    for (int i = 0; i < n; ++i) s += w.allreduce(x[i]);  // ~ blockers: none
    TileWarp w2;
    for (int i = 0; i < n; ++i) s += w2.allreduce(x[i]);  // ~ blockers: none
    return s;
  }
};
using Warp = WarpReduce;

struct Norm {
  WarpReduce red;
  BlockReduce* block;
  __device__ float mean(const float* x, int n) {
    float s = 0.f;
    for (int i = 0; i < n; ++i) s += red.allreduce(x[i]);  // ~ blockers: none
    for (int i = 0; i < n; ++i) s += this->red.allreduce(x[i]);  // ~ blockers: none
    for (int i = 0; i < n; ++i) s += block->allreduce(x[i]);  // ~ blockers: barrier
    return s / n;
  }
};

template <class Reducer>
__device__ float reduce_all(Reducer& r, const float* x, int n) {
  float s = 0.f;
  for (int i = 0; i < n; ++i) s += r.allreduce(x[i]);  // ~ blockers: barrier
  return s;
}

__global__ void layer_norm(float* out, const float* x, float* smem, int n) {
  WarpReduce r;
  BlockReduce b{smem};
  auto w = WarpReduce();
  auto bb = BlockReduce{smem};
  Warp aliased;
  RowReduce row{smem};
  const WarpReduce& cr = r;
  for (int i = 0; i < n; ++i) out[i] = r.allreduce(x[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = b.allreduce(x[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = w.allreduce(x[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = bb.allreduce(x[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = aliased.allreduce(x[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = row.allreduce(x[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = cr.allreduce(x[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = reduce_all(r, x, 4);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = reduce_all(b, x, 4);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = reduce_all<WarpReduce>(r, x, 4);  // ~ blockers: none
  auto tw = TileWarp<decltype(x[0]), 1>();
  TileWarp<decltype(n), 2> tw2;
  for (int i = 0; i < n; ++i) out[i] = tw.allreduce(x[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = tw2.allreduce(x[i]);  // ~ blockers: none
}

__global__ void through_pointer(float* out, const float* x, WarpReduce* pw, BlockReduce* pb, int n) {
  for (int i = 0; i < n; ++i) out[i] = pw->allreduce(x[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = (*pb).allreduce(x[i]);  // ~ blockers: barrier
}
