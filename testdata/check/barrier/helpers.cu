// Barriers reached through __device__ functions of the same file, transitively and through
// recursion; helpers without a barrier do not block.
__device__ void stage(float* s) {
  s[threadIdx.x] *= 2.f;
  __syncthreads();
}

__device__ void two_levels(float* s) { stage(s); }

__device__ int ping(int n);
__device__ int pong(int n) { return n > 0 ? ping(n - 1) : 0; }
__device__ int ping(int n) {
  if (n == 0) __syncthreads();
  return pong(n);
}

__device__ float pure_math(float x) { return x * x + 1.f; }
__device__ float calls_pure(float x) { return pure_math(x) * 2.f; }

template <typename T>
__device__ T templ_sync(T v) {
  __syncthreads();
  return v;
}

__global__ void uses_helpers(float* s, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    stage(s);
  }
  for (int i = 0; i < n; ++i) two_levels(s);  // ~ blockers: barrier
  for (int i = 0; i < 3; ++i) s[i] = ping(i);  // ~ blockers: barrier
  for (int i = 0; i < 3; ++i) s[i] = templ_sync<float>(s[i]);  // ~ blockers: barrier
  for (int i = 0; i < 8; ++i) {  // ~ blockers: none
    s[i] = calls_pure(s[i]);
  }
}

// A lambda bound to a local and called in the loop: its barrier counts; a lambda that does not
// synchronise does not block.
__global__ void lambdas(float* s, int n) {
  auto phase = [&](int i) { s[i] += 1.f; __syncthreads(); };
  auto pure = [](float x) { return x * 2.f; };
  for (int i = 0; i < n; ++i) phase(i);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) s[i] = pure(s[i]);  // ~ blockers: none
}

// Member functions of the same file, called as methods or qualified: their barriers count; a
// free function that happens to share a method's name is not reached by a method call.
struct Tile {
  __device__ void load(float* s) { s[threadIdx.x] = 0.f; __syncthreads(); }
  __device__ float get(const float* s, int i) const { return s[i]; }
  static __device__ void stage(float* s) { __syncthreads(); }
};
__device__ void reset(float* s) { __syncthreads(); }

__global__ void members(float* s, int n) {
  Tile t;
  Tile* p = &t;
  for (int i = 0; i < n; ++i) t.load(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) p->load(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) Tile::stage(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) s[i] = t.get(s, i);  // ~ blockers: none
  for (int i = 0; i < n; ++i) t.reset();  // ~ blockers: none
  // ~^ unresolved: t.reset
}
