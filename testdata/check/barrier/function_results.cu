// `auto x = make(...)`: the object's type is what the unit's functions of that name return.
// A warp reducer that only shuffles, made by one function, does not block its loop although a
// block reducer of the same method name syncs; one made by a function of another namespace,
// or by an overload set that may return either, does. A function whose result is not a class
// of the unit (a pointer, `auto`, a template parameter) leaves the type unknown: the method is
// then every method of that name, and a syncing one blocks.
struct WarpReducer {
  __device__ float allreduce(float x) { return x + __shfl_xor(x, 1); }
};

struct BlockReducer {
  float* s;
  __device__ float allreduce(float x) {
    s[threadIdx.x] = x;
    __syncthreads();
    return s[0];
  }
};

__device__ WarpReducer make_warp() { return WarpReducer{}; }
__device__ BlockReducer make_block(float* s) { return BlockReducer{s}; }

namespace warp {
__device__ WarpReducer make() { return WarpReducer{}; }
}  // namespace warp
namespace block {
__device__ BlockReducer make(float* s) { return BlockReducer{s}; }
}  // namespace block

__device__ WarpReducer either(int) { return WarpReducer{}; }
__device__ BlockReducer either(float* s) { return BlockReducer{s}; }

__device__ BlockReducer* pointer_to(BlockReducer* r) { return r; }
__device__ auto deduced(float* s) { return BlockReducer{s}; }
template <typename R>
__device__ R made() { return R{}; }

__global__ void function_results(float* a, float* s, int n) {
  auto w = make_warp();
  for (int i = 0; i < n; ++i) a[i] = w.allreduce(a[i]);  // ~ blockers: none
  auto b = make_block(s);
  for (int i = 0; i < n; ++i) a[i] = b.allreduce(a[i]);  // ~ blockers: barrier
  auto nw = warp::make();
  for (int i = 0; i < n; ++i) a[i] = nw.allreduce(a[i]);  // ~ blockers: none
  auto nb = block::make(s);
  for (int i = 0; i < n; ++i) a[i] = nb.allreduce(a[i]);  // ~ blockers: barrier
  auto e = either(3);
  for (int i = 0; i < n; ++i) a[i] = e.allreduce(a[i]);  // ~ blockers: barrier
  BlockReducer r{s};
  auto p = pointer_to(&r);
  for (int i = 0; i < n; ++i) a[i] = p->allreduce(a[i]);  // ~ blockers: barrier
  auto d = deduced(s);
  for (int i = 0; i < n; ++i) a[i] = d.allreduce(a[i]);  // ~ blockers: barrier
  auto m = made<WarpReducer>();
  for (int i = 0; i < n; ++i) a[i] = m.allreduce(a[i]);  // ~ blockers: barrier
}
