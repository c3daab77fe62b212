// Hard-coded warp sizes in macros and constants.
#define WARP_SIZE 32  // ~ diag: wave-size
#define BLOCK_SIZE 32
#define WAVE64 64
constexpr int kWarpSize = 32;  // ~ diag: wave-size
constexpr int kWaveSize = 64;
static const int TILE = 32;

__global__ void uses_defines(float* out) {
  const int warp_size = 32;  // ~ diag: wave-size
  out[threadIdx.x] = WARP_SIZE + kWarpSize + BLOCK_SIZE + TILE + warp_size + kWaveSize + WAVE64;
}
