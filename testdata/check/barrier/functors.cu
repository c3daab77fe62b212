// Functors reached without a named variable: temporaries (`Sync{}(s)`, `Sync()(s)`), structs
// defined inside the kernel and called through a local, and a functor passed to a template
// whose parameter the call binds. A functor that only computes does not block.
struct Sync {
  __device__ void operator()(float* s) const { __syncthreads(); }
};

struct Twice {
  __device__ float operator()(float v) const { return 2.f * v; }
};

template <class Op>
__device__ void each(Op op, float* s, int n) {
  for (int i = 0; i < n; ++i) op(s);  // ~ blockers: barrier
}

template <class Op>
__device__ float apply_to(Op op, float v) { return op(v); }

__global__ void functor_temporaries(float* a, float* s, int n) {
  for (int i = 0; i < n; ++i) { a[i] += 1.f; Sync{}(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; Sync()(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = Twice{}(a[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) a[i] = Twice()(a[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) a[i] = apply_to(Twice{}, a[i]);  // ~ blockers: none
  Sync sync;
  Twice twice;
  for (int i = 0; i < n; ++i) each(sync, s, 2);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = apply_to(twice, a[i]);  // ~ blockers: none
}

__global__ void local_structs(float* a, float* s, int n) {
  struct Barrier {
    __device__ void operator()() const { __syncthreads(); }
  };
  struct Step {
    float* s;
    __device__ void advance(int i) { s[i] = 0.f; __syncthreads(); }
    __device__ float read(int i) const { return s[i]; }
  };
  struct Scale {
    __device__ float operator()(float v) const { return v * 0.5f; }
  };
  Barrier bar;
  Step step{s};
  Scale scale;
  for (int i = 0; i < n; ++i) { a[i] = 0.f; bar(); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) step.advance(i);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = step.read(i) + scale(a[i]);  // ~ blockers: none
}

// A lambda passed to a template binds its parameter to the lambda: the lambda's body counts
// (written in the loop, or held by a variable and passed), the unit's other functors do not.
template <class F>
__device__ void for_each_lane(F f) { f(threadIdx.x); }

__global__ void lambdas_through_templates(float* a, float* s, int n) {
  auto sync_lane = [&](unsigned) { __syncthreads(); };
  for (int i = 0; i < n; ++i) for_each_lane([&](unsigned l) { a[l] = 0.f; });  // ~ blockers: none
  for (int i = 0; i < n; ++i) for_each_lane([&](unsigned l) { __syncthreads(); });  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) for_each_lane(sync_lane);  // ~ blockers: barrier
}
