// Atomics whose bodies are in headers not found here, known by their names: wrappers such as
// PyTorch's `gpuAtomicAdd` (`Atomic` in a camel-case name) and intrinsic declarations such as
// composable_kernel's `llvm_amdgcn_raw_buffer_atomic_add_fp32` (an `atomic` part). They block
// the loop and stay listed as `unresolved`; `nonatomic_fill` and a method `atomic_local_m()`
// of a layout are no atomics.
#include <ATen/cuda/Atomic.cuh>
#include <ck/utility/amd_buffer_addressing.hpp>

__global__ void wrappers(float* grad, const float* g, int n, Layout layout) {
  for (int i = 0; i < n; ++i) gpuAtomicAdd(grad + i % 8, g[i]);  // ~ blockers: atomic
  // ~^ unresolved: gpuAtomicAdd
  for (int i = 0; i < n; ++i) llvm_amdgcn_raw_buffer_atomic_add_fp32(g[i], 0, i * 4, 0, 0);  // ~ blockers: atomic
  // ~^ unresolved: llvm_amdgcn_raw_buffer_atomic_add_fp32
  for (int i = 0; i < n; ++i) nonatomic_fill(grad + i, g[i] + layout.atomic_local_m());  // ~ blockers: none
  // ~^ unresolved: layout.atomic_local_m, nonatomic_fill
}
