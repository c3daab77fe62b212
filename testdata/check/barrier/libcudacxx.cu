// libcu++ barriers and pipelines (CUDA sample globalToShmemAsyncCopy.cu's patterns), directly,
// through a `__device__` helper, a macro and a lambda. Asynchronous copies and the per-thread
// pipeline primitives issue or wait for the calling thread's own copies: they do not block.
#include <cuda/barrier>
#include <cuda/pipeline>
#define CONSUME(p) (p).consumer_wait()
__device__ void phase(cuda::barrier<cuda::thread_scope_block>& bar) { bar.arrive_and_wait(); }

__global__ void copy(float* out, const float* in, int n) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ float tile[256];
  auto pipe = cuda::make_pipeline();
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    tile[threadIdx.x] = in[i];
    bar.arrive_and_wait();
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    auto token = bar.arrive();
    bar.wait(std::move(token));
  }
  for (int i = 0; i < n; ++i) phase(bar);
  // ~^ blockers: barrier
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    pipe.producer_acquire();
    cuda::memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float), pipe);
    pipe.producer_commit();
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    CONSUME(pipe);
    out[i] = tile[threadIdx.x];
    pipe.consumer_release();
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    cuda::pipeline_consumer_wait_prior<0>(pipe);
  }
  auto drain = [&]() { cuda::pipeline_producer_commit(pipe, bar); };
  for (int i = 0; i < n; ++i) drain();
  // ~^ blockers: barrier
  // Not synchronisation by themselves.
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    cuda::memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float), bar);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
  }
}
