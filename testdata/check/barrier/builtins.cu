// Barrier builtins of both vendors, and the cooperative-groups forms not covered elsewhere:
// `cg::wait` / `cg::wait_prior` (they end with `group.sync()`), `this_thread_block().sync()`,
// cluster `barrier_arrive`/`barrier_wait`; through a helper, a macro and a lambda.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
#define CG_WAIT(g) cg::wait(g)
__device__ void amd_barrier() { __builtin_amdgcn_s_barrier(); }

__global__ void k(int* x, int n) {
  cg::thread_block tb = cg::this_thread_block();
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    __builtin_amdgcn_s_barrier();
  }
  for (int i = 0; i < n; ++i) amd_barrier();
  // ~^ blockers: barrier
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    __nvvm_bar_sync(0);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    __work_group_barrier(0);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    cg::memcpy_async(tb, x, x + i, sizeof(int));
    cg::wait_prior<1>(tb);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    CG_WAIT(tb);
  }
  auto next = [&]() { cg::this_thread_block().sync(); };
  for (int i = 0; i < n; ++i) next();
  // ~^ blockers: barrier
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    auto cluster = cg::this_cluster();
    auto token = cluster.barrier_arrive();
    cluster.barrier_wait(std::move(token));
  }
}
