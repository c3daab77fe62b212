#!/bin/sh
# Builds the tune example's driver as host C++ through hip-unroll's HIP host shim.
# HIP_HOST_DIR: the directory of hip_host.h (testdata/transforms in the hip-unroll repository).
# -O1 leaves the loops alone unless a pragma asks; -ffast-math with -fslp-vectorize lets the
# compiler reassociate float sums it sees side by side (rowsum unrolled by hand).
# -falign-functions=64 -falign-loops=32: every kernel is in one translation unit, so a change to
# one kernel moves the code of the others; aligned entries and loop heads keep that move from
# changing their speed (code layout, not the unroll, made no-effect variants look 3-4% faster).
set -e
exec "${CXX:-clang++-19}" -O1 -falign-functions=64 -falign-loops=32 -ffast-math -fslp-vectorize -I"${HIP_HOST_DIR:?set HIP_HOST_DIR to the directory of hip_host.h}" -o app driver.cpp
