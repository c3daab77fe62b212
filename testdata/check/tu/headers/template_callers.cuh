// Callers of the including file's templates, which nothing in that file calls: their lambdas
// are what the templates' loops call. `twice` is a template itself, so its callers' lambdas
// reach `each` through it.
#pragma once

__device__ inline void run_sync(float* s, int n) {
  each([s] __device__ (int i) { s[i] = 0; __syncthreads(); }, n);
}

template <class G>
__device__ void twice(G g, int n) {
  each(g, n);
  each(g, n);
}

__device__ inline void run_count(int* c, int n) {
  twice([c] __device__ (int i) { atomicAdd(c, i); }, n);
}

__device__ inline void run_pure(float* a, int n) {
  each_pure([a] __device__ (int i) { a[i] *= 2.0f; }, n);
}
