// Cooperative-groups synchronisation on any group object: tiles, grids, coalesced groups, a
// group returned by a call, passed to a header helper, through a namespace alias or `using`.
#include <cooperative_groups.h>
#include "headers/groups.cuh"
namespace cg = cooperative_groups;
using namespace cooperative_groups;

__global__ void groups(float* a, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::grid_group grid = cg::this_grid();
  auto active = cg::coalesced_threads();
  for (int i = 0; i < n; i++) { a[i] += 1; warp.sync(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; grid.sync(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; active.sync(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; cg::tiled_partition<16>(block).sync(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; cg::sync(warp); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; cooperative_groups::sync(grid); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; sync(block); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; group_sync(warp); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; this_thread_block().sync(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) a[i] += warp.thread_rank() + warp.shfl_down(a[i], 1);  // ~ blockers: none
}
