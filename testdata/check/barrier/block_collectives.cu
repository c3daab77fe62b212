// Block-wide collectives of CUB, hipCUB and rocPRIM synchronise the thread block, and their
// bodies are in system headers the guards do not read: called in a loop (directly or through
// a helper) they block it, and are still listed as `unresolved`. A call of a function of the
// unit with such a name is judged by its visible body.
#include <hip/hip_runtime.h>
#include <hipcub/hipcub.hpp>

using BlockReduce = hipcub::BlockReduce<float, 256>;
using BlockScan = hipcub::BlockScan<int, 256>;

__device__ float row_sum(BlockReduce::TempStorage& temp, float v) {
  return BlockReduce(temp).Sum(v);
}

// Visible: only shuffles, no barrier.
__device__ float warp_block_reduce_local(float v) {
  for (int o = 32; o > 0; o >>= 1) v += __shfl_xor(v, o);  // ~ blockers: none
  return v;
}

__global__ void collectives(const float* in, float* out, int* offsets, int rows,
                            hipcub::BlockRunLengthDecode<int, 256, 1, 4>& decoder, int* items) {
  __shared__ BlockReduce::TempStorage temp;
  __shared__ float work[256];
  __shared__ BlockScan::TempStorage scan_temp;
  for (int r = 0; r < rows; ++r) {  // ~ blockers: barrier
    // ~^ unresolved: BlockReduce(temp).Sum
    float s = BlockReduce(temp).Sum(in[r * 256 + threadIdx.x]);
    if (threadIdx.x == 0) out[r] = s;
  }
  for (int r = 0; r < rows; ++r) {  // ~ blockers: barrier
    // ~^ unresolved: BlockScan(scan_temp).ExclusiveSum
    int x = offsets[r * 256 + threadIdx.x];
    BlockScan(scan_temp).ExclusiveSum(x, x);
    offsets[r * 256 + threadIdx.x] = x;
  }
  for (int r = 0; r < rows; ++r) out[r] = row_sum(temp, in[r]);  // ~ blockers: barrier
  // ~^ unresolved: BlockReduce(temp).Sum
  for (int r = 0; r < rows; ++r) out[r] = block_reduce_max(in[r]);  // ~ blockers: barrier
  // ~^ unresolved: block_reduce_max
  for (int r = 0; r < rows; ++r) out[r] = warp_block_reduce_local(in[r]);  // ~ blockers: none
  for (int r = 0; r < rows; ++r) { out[r] = in[r]; rocprim::syncthreads(); }  // ~ blockers: barrier
  // ~^ unresolved: rocprim::syncthreads
  // composable_kernel's block-wide reduction (its header not found).
  for (int r = 0; r < rows; ++r) { float v = in[r]; ck::BlockwiseReduce::Reduce(work, v); out[r] = v; }  // ~ blockers: barrier
  // ~^ unresolved: ck::BlockwiseReduce::Reduce
  // A run-length decoder's decode step does not synchronise (its constructor does).
  for (int r = 0; r < rows; ++r) decoder.RunLengthDecode(items, r * 256);  // ~ blockers: none
  // ~^ unresolved: decoder.RunLengthDecode
}
