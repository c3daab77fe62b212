// Overloads: a call passing `n` arguments calls only the functions of its name whose
// parameters take `n` (defaults and packs counted). A reducer's one-argument `reduce` only
// shuffles and its two-argument one synchronises: each call is judged by the one it calls.
// Where the count cannot be trusted, every function of the name counts: a macro among the
// arguments (it may stand for several or none), a macro standing for parameters, a default
// given by an earlier declaration, C's `...`, parameter packs and pack expansions.
__device__ float reduce(float x) { return x + __shfl_xor(x, 1); }
__device__ float reduce(float x, float* s) {
  s[threadIdx.x] = x;
  __syncthreads();
  return s[0];
}

// A default value: one argument may call the two-parameter overload.
__device__ float scale(float x, float* s = nullptr) {
  if (s) __syncthreads();
  return x;
}
__device__ float scale(float x, int a, int b) { return x * a + b; }

// The default is given by the declaration, not repeated by the definition.
__device__ float step(float* s, int k = 0);
__device__ float step(float a) { return a; }
__device__ float step(float* s, int k) {
  __syncthreads();
  return s[k];
}

// C's `...` and a parameter pack take any count.
__device__ float logged(const char* fmt, ...) {
  __syncthreads();
  return 0.f;
}
__device__ float logged(int code, int a, int b) { return code + a + b; }
template <typename... Ts>
__device__ float packed(Ts... xs) {
  __syncthreads();
  return 0.f;
}
__device__ float packed(float a) { return a; }

// A macro standing for parameters: its count is unknown.
#define FILL_PARAMS float *s, int k
__device__ void fill(FILL_PARAMS) {
  s[k] = 0.f;
  __syncthreads();
}
__device__ void fill(float x, float y) {}

// `(void)` takes none.
__device__ float tick(void) { return 1.f; }
__device__ float tick(float* s) {
  __syncthreads();
  return s[0];
}

// A pack expansion passes any number of arguments.
template <typename... Ts>
__device__ float forward(Ts... xs) {
  return reduce(xs...);
}

// A macro standing for arguments.
#define BOTH v, smem

struct Reducer {
  float* s;
  __device__ float put(float x) { return x + __shfl_down(x, 1); }
  __device__ float put(float x, int lane) {
    s[lane] = x;
    __syncthreads();
    return s[0];
  }
};

__global__ void overloads(float* out, const float* in, float* smem, int n) {
  Reducer r{smem};
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    float v = in[i];
    out[i] = reduce(v);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    float v = in[i];
    out[i] = reduce(v, smem);
  }
  for (int i = 0; i < n; ++i) out[i] = r.put(in[i]);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = r.put(in[i], i);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = scale(in[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = scale(in[i], 2, 3);  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = step(smem);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = logged("x", i, i);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = packed(in[i], in[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) fill(smem, i);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) out[i] = tick();  // ~ blockers: none
  for (int i = 0; i < n; ++i) out[i] = forward(in[i], smem);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    float v = in[i];
    out[i] = reduce(BOTH);
  }
}
