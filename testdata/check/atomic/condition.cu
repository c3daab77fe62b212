// Atomics in the loop condition block the loop.
__global__ void cond_atomics(int* lock, int* work, int n) {
  while (atomicCAS(lock, 0, 1) != 0) {  // ~ blockers: atomic
  }
  do {  // ~ blockers: atomic
    work[0] += 1;
  } while (atomicAdd(&work[1], 1) < n);
  for (int i = 0; atomicAdd(&work[2], 1) < n; ++i) {  // ~ blockers: atomic
    work[3] = i;
  }
  while (work[0] < n) {  // ~ blockers: none
    work[0] += 2;
  }
}
