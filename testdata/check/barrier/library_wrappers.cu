// Barrier wrappers of other libraries whose headers are not found here synchronise all the
// same: rocWMMA's `synchronize_workgroup()`, composable_kernel's `block_sync_lds()`, rocPRIM's
// `wave_barrier()`, CUB's `CTA_SYNC()` and grid barrier `Sync()`, a grid barrier
// `gms_barrier()`, a function named `s_barrier()`. Each blocks its loop and stays listed as
// `unresolved`; a wait on the wave's own counters (`s_waitcnt_lgkmcnt()`) does not block.
#include <rocwmma/rocwmma.hpp>
#include <ck/utility/synchronization.hpp>
#include <rocprim/intrinsics/thread.hpp>
#include <cub/util_ptx.cuh>
#include <cub/grid/grid_barrier.cuh>

__global__ void wrappers(float* a, int n, cub::GridBarrier global_barrier) {
  for (int i = 0; i < n; ++i) { a[i] += 1.f; rocwmma::synchronize_workgroup(); }  // ~ blockers: barrier
  // ~^ unresolved: rocwmma::synchronize_workgroup
  for (int i = 0; i < n; ++i) { a[i] += 1.f; ck::block_sync_lds(); }  // ~ blockers: barrier
  // ~^ unresolved: ck::block_sync_lds
  for (int i = 0; i < n; ++i) { a[i] += 1.f; ::rocprim::wave_barrier(); }  // ~ blockers: barrier
  // ~^ unresolved: ::rocprim::wave_barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; CTA_SYNC(); }  // ~ blockers: barrier
  // ~^ unresolved: CTA_SYNC
  for (int i = 0; i < n; ++i) { a[i] += 1.f; global_barrier.Sync(); }  // ~ blockers: barrier
  // ~^ unresolved: global_barrier.Sync
  for (int i = 0; i < n; ++i) { a[i] += 1.f; gms_barrier(n); }  // ~ blockers: barrier
  // ~^ unresolved: gms_barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; s_barrier(); }  // ~ blockers: barrier
  // ~^ unresolved: s_barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; s_waitcnt_lgkmcnt(); }  // ~ blockers: none
  // ~^ unresolved: s_waitcnt_lgkmcnt
}
