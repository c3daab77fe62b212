// Evidence travels outwards with a cap per rule: three `goto`s that stay inside the outer loop
// must not crowd out the inner `return`, which leaves every loop.
__global__ void k(int* x) {
  for (int a = 0; a < 4; ++a) {
    // ~^ blockers: early-exit
    for (int b = 0; b < 4; ++b) {
      // ~^ blockers: early-exit
      if (x[0]) goto next;
      if (x[1]) goto next;
      if (x[2]) goto next;
      for (int c = 0; c < 4; ++c) {
        // ~^ blockers: early-exit
        if (x[c]) return;
      }
    }
  next:
    x[a] = 0;
  }
  for (int a = 0; a < 4; ++a) {
    // ~^ blockers: none
    for (int b = 0; b < 4; ++b) {
      // ~^ blockers: early-exit
      if (x[0]) goto next2;
      if (x[1]) goto next2;
      if (x[2]) goto next2;
      if (x[3]) goto next2;
    }
  next2:
    x[a] = 0;
  }
}
