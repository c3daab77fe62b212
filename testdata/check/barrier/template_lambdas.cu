// Loops inside a template that call a lambda its callers pass (`f(i)` on `F f`): the lambda's
// body is what the loop calls, through the call that binds it: written in the call, held by a
// variable, or forwarded by another template. A lambda that only stores does not block; each
// call of the template is judged with its own lambda. No functor of this file syncs, so
// nothing here is blocked by name.
#include <hip/hip_runtime.h>
#include <utility>

// A lambda that syncs, passed by one call.
template <class F>
__device__ void each(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: barrier
}

// Lambdas that only store, passed written in the call and held by a variable.
template <class F>
__device__ void each_quiet(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: none
}

// A lambda held by a variable, that syncs.
template <class F>
__device__ void each_held(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: barrier
}

// Forwarded: `outer` passes its `g` on to `inner`, whose loop calls it.
template <class F>
__device__ void inner(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: barrier
}
template <class G>
__device__ void outer(G g) { inner(g); }

__global__ void uses(float* out) {
  each([&](int i) { out[i] = 0.f; __syncthreads(); });
  each_quiet([&](int i) { out[i] = 1.f; });
  auto store = [&](int i) { out[i] = 2.f; };
  each_quiet(store);
  auto sync_store = [&](int i) { __syncthreads(); out[i] = 3.f; };
  each_held(sync_store);
  outer([&](int i) { __syncthreads(); out[i] = 4.f; });
  // This call's `each` is the one of this lambda, which does not sync.
  for (int i = 0; i < 4; ++i) each([&](int j) { out[j] = 5.f; });  // ~ blockers: none
}

// A lambda that syncs on the device's `__syncthreads` through a helper, and one that adds
// atomically: both reach the template's loop.
__device__ void sync_all() { __syncthreads(); }

template <class F>
__device__ void each_helper(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: barrier
}

template <class F>
__device__ void each_atomic(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: atomic
}

// The ways a template calls what it is passed: forwarded (`std::forward<F>(f)(i)`, moved),
// through a pointer (`(*f)(i)`, passed `&lambda`), by const reference, as a member template
// with an explicit argument before the deduced one.
template <class F>
__device__ void each_forwarded(F&& f) {
  for (int i = 0; i < 4; ++i) std::forward<F>(f)(i);  // ~ blockers: barrier
}

template <class F>
__device__ void each_moved(F f) {
  for (int i = 0; i < 4; ++i) std::move(f)(i);  // ~ blockers: barrier
}

template <class F>
__device__ void each_pointer(F* f) {
  for (int i = 0; i < 4; ++i) (*f)(i);  // ~ blockers: barrier
}

template <class F>
__device__ void each_cref(const F& f) {
  for (int i = 0; i < 4; ++i) (f)(i);  // ~ blockers: barrier
}

struct Tile {
  template <int N, class F>
  __device__ void each(F f) {
    for (int i = 0; i < N; ++i) f(i);  // ~ blockers: barrier
  }
};

__global__ void more(float* out, int* count) {
  each_helper([&](int i) { out[i] = 6.f; sync_all(); });
  each_atomic([&](int i) { atomicAdd(count, i); });
  auto sync = [&](int i) { __syncthreads(); out[i] = 7.f; };
  each_forwarded(sync);
  each_moved(sync);
  each_pointer(&sync);
  each_cref(sync);
  Tile t;
  t.each<4>([&](int i) { __syncthreads(); });
}

// A function named as a value (`&f` or `f`) binds the parameter to that function; a parameter
// declared `auto` (an abbreviated template) is bound like a template parameter.
__device__ void sync_step(int) { __syncthreads(); }
__device__ void quiet_step(int) {}

template <class F>
__device__ void each_fn(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: barrier
}

template <class F>
__device__ void each_fn_quiet(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: none
}

__device__ void each_auto(auto f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: barrier
}

__device__ void each_auto_quiet(auto f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: none
}

// (A function with a parameter declared `auto` is a template: its generic body never runs as
// such, whatever the parameter's name.)
__device__ void each_auto_quiet_named(auto step) {
  for (int i = 0; i < 4; ++i) step(i);  // ~ blockers: none
}

__global__ void values(float* out) {
  each_fn(&sync_step);
  each_fn(quiet_step);
  each_fn_quiet(&quiet_step);
  each_auto([&](int i) { __syncthreads(); out[i] = 8.f; });
  each_auto_quiet([&](int i) { out[i] = 9.f; });
  each_auto_quiet(quiet_step);
  each_auto_quiet_named(quiet_step);
}

// A generic lambda whose loop calls its own parameter: what the calls of the variable holding
// it pass there (a lambda written in the call or held by a variable, a function).
__global__ void generic_lambdas(float* out) {
  auto apply = [&](auto op) {
    for (int i = 0; i < 4; ++i) op(i);  // ~ blockers: barrier
  };
  apply([&](int i) { out[i] = 10.f; });
  apply([&](int i) { __syncthreads(); });
  auto apply_quiet = [&](auto op, int n) {
    for (int i = 0; i < n; ++i) op(i);  // ~ blockers: none
  };
  auto store = [&](int i) { out[i] = 11.f; };
  apply_quiet(store, 4);
  apply_quiet(quiet_step, 2);
  auto apply_fn = [&](auto op) {
    for (int i = 0; i < 4; ++i) op(i);  // ~ blockers: barrier
  };
  apply_fn(&sync_step);
}
