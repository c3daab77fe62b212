//! What the runner's tests share: nvcc, found as the runner finds it, or a failure that says how
//! to install it (a test that needs nvcc never passes without it).

use std::path::PathBuf;

/// nvcc ($CUDA_HOME/bin/nvcc, else on PATH); panics with the install line when there is none.
pub fn nvcc() -> PathBuf {
    match runner::build::find_nvcc(None, None) {
        Ok(Some(p)) => p,
        Ok(None) => panic!(
            "this test needs nvcc and found none in $CUDA_HOME/bin or on PATH: {}; then export CUDA_HOME=<venv>/lib/python3.*/site-packages/nvidia/cu13 (.ci/run does both)",
            runner::build::NVCC_INSTALL
        ),
        Err(e) => panic!("nvcc cannot be used: {e}"),
    }
}
