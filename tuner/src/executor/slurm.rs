//! Slurm job steps as lanes (to come).
