//! The one-kernel bench tree of the tune tests (`tune_backends`, `tune_slurm`): `k.cu`, a
//! kernel with one constant-trip loop, and `k.toml`, its launch spec (one exact output buffer).

/// The launch spec of `k.cu`'s kernel.
pub const SPEC: &str = "version = 1\nsource = \"k.cu\"\nkernel = \"k\"\ngrid = [1]\nblock = [64]\n\n[[args]]\nname = \"out\"\nbuffer = \"i32\"\nlength = 64\noutput = \"exact\"\n";

/// Write `k.cu` and `k.toml` into `dir`.
pub fn write(dir: &std::path::Path) {
    std::fs::write(
        dir.join("k.cu"),
        "__global__ void k(int* out) {\n  for (int i = 0; i < 64; ++i) out[i] = i;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("k.toml"), SPEC).unwrap();
}
