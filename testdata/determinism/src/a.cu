#include "math.cuh"
#include "tiles.h"

__global__ void k_square(float* a, int n) {
  for (int r = 0; r < 4; ++r) square_all(a + r * n, n);
}

__global__ void k_tiles(float* a, const float* b, int n) {
  for (int t = 0; t < tiles_for(n); ++t) copy_tile<TILE>(a + t * TILE, b + t * TILE);
}
