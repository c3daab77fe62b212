// Cooperative-groups synchronisation: method calls on groups and the free `cg::sync`.
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void coop(float* data, int iters) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  for (int it = 0; it < iters; ++it) {  // ~ blockers: barrier
    data[grid.thread_rank()] += 1.f;
    grid.sync();
  }
  for (int it = 0; it < iters; ++it) {  // ~ blockers: barrier
    data[block.thread_rank()] *= 2.f;
    cg::sync(block);
  }
  for (int it = 0; it < 4; ++it) {  // ~ blockers: barrier
    cooperative_groups::this_grid().sync();
  }
  for (int it = 0; it < 4; ++it) {  // ~ blockers: barrier
    block.sync();
  }
  // Clean: group queries are not barriers.
  for (int it = 0; it < 4; ++it) {  // ~ blockers: none
    data[it] = block.size() + grid.thread_rank();
  }
}
