// `goto` to a label outside the loop blocks; to a label inside the loop it does not.
__global__ void gotos(int* v, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: early-exit
    if (v[i] == 0) goto done;
    v[i] -= 1;
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    if (v[i] == 1) goto next;
    v[i] *= 2;
  next:
    v[i] += 1;
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    for (int j = 0; j < 4; ++j) {  // ~ blockers: early-exit
      if (v[j] == i) goto outer_next;
    }
  outer_next:;
  }
done:
  v[0] = 0;
}
