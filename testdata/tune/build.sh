#!/bin/sh
# Builds the tune example's driver as host C++ through hip-unroll's HIP host shim.
# HIP_HOST_DIR: the directory of hip_host.h (testdata/transforms in the hip-unroll repository).
# -O1 leaves the loops alone unless a pragma asks; -ffast-math with -fslp-vectorize lets the
# compiler reassociate float sums it sees side by side (rowsum unrolled by hand).
# -falign-functions=64 -falign-loops=32: every kernel is in one translation unit, so a change to
# one kernel moves the code of the others; aligned entries and loop heads keep that move from
# changing their speed (code layout, not the unroll, made no-effect variants look 3-4% faster).
# COST=1: the cost build (cost.h): the program also prints "cost: N edges", the control-flow
# edges of the optimized code its kernels pass, a figure that does not vary from run to run;
# the chain runs 400 steps instead of 8000, so its outputs are expected-cost.txt.
set -e
cost=
if [ "${COST:-0}" = 1 ]; then cost="-fsanitize-coverage=trace-pc-guard -DHU_COST"; fi
exec "${CXX:-clang++-19}" -O1 -falign-functions=64 -falign-loops=32 -ffast-math -fslp-vectorize $cost -I"${HIP_HOST_DIR:?set HIP_HOST_DIR to the directory of hip_host.h}" -o app driver.cpp
