// `return` leaves every enclosing loop; a `return` inside a lambda leaves only the lambda.
__device__ int first_negative(const int* v, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: early-exit
    if (v[i] < 0) return i;
  }
  return -1;
}

__global__ void returns(int* v, int n) {
  for (int i = 0; i < 8; ++i) {  // ~ blockers: early-exit
    for (int j = 0; j < 8; ++j) {  // ~ blockers: early-exit
      if (v[i * 8 + j] == 42) return;
    }
  }
  for (int i = 0; i < 8; ++i) {  // ~ blockers: none
    auto clamp = [](int x) { if (x < 0) return 0; return x; };
    v[i] = clamp(v[i]);
  }
  for (int i = 0; i < 8; ++i) v[i] = first_negative(v, n);  // ~ blockers: none
}
