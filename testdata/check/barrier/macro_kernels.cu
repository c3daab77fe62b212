// Kernels defined by a function-like macro of the file are expanded for the analysis: the
// loops of the replacement list are reported at their real lines (the `#define`), once per
// invocation, and a loop whose body follows the invocation (`DEFINE_HEADER(k) { ... }`) at
// its own line. A macro call without `;` at file scope never swallows the next definition.
#define DEFINE_KERNEL(name, T)                                  \
  __global__ void name(T* p, int n) {                           \
    for (int i = 0; i < n; ++i) {                               \
      p[i] = p[i] * 2;                                          \
      __syncthreads();                                          \
    }                                                           \
    for (int i = 0; i < n; ++i) p[i] += 1;                      \
  }
// ~^^^^^^ blockers: barrier
// ~^^^ blockers: none
#define DEFINE_HEADER(name) __global__ void name(float* p, int n)
#define INSTANTIATE(T) template __global__ void templ<T>(T*, int);

DEFINE_KERNEL(scale_f, float)
DEFINE_KERNEL(scale_d, double)

DEFINE_HEADER(body_after) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    p[i] = 0.f;
    __syncthreads();
  }
  for (int i = 0; i < n; ++i) p[i] = 1.f;  // ~ blockers: none
}

template <typename T>
__global__ void templ(T* p, int n) {
  for (int i = 0; i < n; ++i) p[i] = T(0);  // ~ blockers: none
}

INSTANTIATE(float)
__global__ void after_instantiate(float* p, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    p[i] = 0.f;
    __syncthreads();
  }
}
UNKNOWN_REGISTRATION(after_instantiate, 256)
__global__ void after_unknown_call(float* p, int n) {
  for (int i = 0; i < n; ++i) p[i] = 2.f;  // ~ blockers: none
}

// Token pastes in the name: one kernel per invocation and suffix.
#define PASTED_KERNELS(op)                                   \
  __global__ void op##_sync_kernel(float* p, int n) {        \
    for (int i = 0; i < n; ++i) { p[i] = 0.f; __syncthreads(); } \
  }                                                          \
  __global__ void op##_plain_kernel(float* p, int n) {       \
    for (int i = 0; i < n; ++i) p[i] = 1.f;                  \
  }
// ~^^^^^ blockers: barrier
// ~^^^ blockers: none
PASTED_KERNELS(add)
PASTED_KERNELS(mul)
