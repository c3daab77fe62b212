// Included inside a class body (see group_ops.cuh): each function here is a static member of
// the class that includes it, though this file alone declares free functions.
__device__ static inline void arrive(float* bar) {
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];" :: "l"(bar));
}
__device__ static inline void relax(float* bar) { bar[0] = 0.f; }
// `all` is the enclosing class's member (`sync::all`, a barrier), not a free `all`.
__device__ static inline void gather(float* bar) {
  bar[0] = 1.f;
  all();
}
