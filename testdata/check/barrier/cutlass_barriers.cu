// CUTLASS and CuTe barriers whose bodies are in headers not found here: a static operation of a
// barrier or pipeline class (`NamedBarrier::sync`, `NamedBarrier::arrive`,
// `ClusterBarrier::wait`) and the cluster barriers (`cute::cluster_sync`, `cluster_arrive`,
// `cluster_wait`) block a loop and stay listed as `unresolved`. A fence only orders memory.
#include <cutlass/arch/barrier.h>
#include <cute/arch/cluster_sm90.hpp>

__global__ void cutlass_barriers(float* a, int n) {
  for (int i = 0; i < n; ++i) { a[i] += 1.f; cutlass::arch::NamedBarrier::sync(128, 1); }  // ~ blockers: barrier
  // ~^ unresolved: cutlass::arch::NamedBarrier::sync
  for (int i = 0; i < n; ++i) { a[i] += 1.f; cutlass::arch::NamedBarrier::arrive(128, 1); }  // ~ blockers: barrier
  // ~^ unresolved: cutlass::arch::NamedBarrier::arrive
  for (int i = 0; i < n; ++i) { a[i] += 1.f; cute::cluster_sync(); }  // ~ blockers: barrier
  // ~^ unresolved: cute::cluster_sync
  for (int i = 0; i < n; ++i) { a[i] += 1.f; cute::cluster_arrive_relaxed(); cute::cluster_wait(); }  // ~ blockers: barrier
  // ~^ unresolved: cute::cluster_arrive_relaxed, cute::cluster_wait
  for (int i = 0; i < n; ++i) { a[i] += 1.f; cutlass::arch::ClusterBarrier::wait(nullptr, 0); }  // ~ blockers: barrier
  // ~^ unresolved: cutlass::arch::ClusterBarrier::wait
  for (int i = 0; i < n; ++i) { a[i] += 1.f; cutlass::arch::fence_view_async_shared(); }  // ~ blockers: none
  // ~^ unresolved: cutlass::arch::fence_view_async_shared
}
