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
