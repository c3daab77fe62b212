//! The bounds of a tune's settings, checked by the library (not only by the command line), so
//! that a config file or another caller cannot bypass them: factors (count and value), working
//! copies, pairs per comparison ([`crate::stats::Plan::validate`], [`crate::stats::MAX_RUNS`]),
//! the noise allowance and every time limit.

use crate::error::Error;
use crate::setting::Setting;
use crate::settings::Settings;
use std::time::Duration;

/// At most this many unroll factors.
pub const MAX_FACTORS: usize = 16;
/// The largest unroll factor (the manual transform's own limit).
pub const MAX_FACTOR: u32 = pipeline::MAX_MANUAL_FACTOR;
/// At most this many working copies prepared in parallel.
pub const MAX_JOBS: usize = 256;
/// At most this many lanes (`--devices`, `--lanes`).
pub const MAX_LANES: usize = 1024;
/// The longest time limit of a build, run, check or compile (one day).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// Check the settings of a tune.
pub fn check(settings: &Settings) -> Result<(), Error> {
    let invalid = |setting, rule: String| Err(Error::Invalid { setting, rule });
    settings.plan.validate()?;
    // A factor of 0 is `pipeline::FULL`, a full unroll (`full`).
    let f = &settings.factors;
    if f.is_empty() {
        return invalid(Setting::Factors, " must list factors of at least 1".into());
    }
    if f.len() > MAX_FACTORS {
        return invalid(
            Setting::Factors,
            format!(" lists {} factors; at most {MAX_FACTORS}", f.len()),
        );
    }
    if let Some(big) = f.iter().find(|&&x| x > MAX_FACTOR) {
        return invalid(
            Setting::Factors,
            format!(": {big} is over the largest unroll factor, {MAX_FACTOR}"),
        );
    }
    if settings.modes.is_empty() {
        return invalid(Setting::Mode, " must name pragma, manual or both".into());
    }
    if settings.jobs < 1 || settings.jobs > MAX_JOBS {
        return invalid(
            Setting::Jobs,
            format!(" must be 1 to {MAX_JOBS} (got {})", settings.jobs),
        );
    }
    if !(settings.max_noise > 0.0 && settings.max_noise.is_finite()) {
        return invalid(
            Setting::MaxNoise,
            format!(
                " must be a positive percentage (got {})",
                settings.max_noise * 100.0
            ),
        );
    }
    codeobj::compile::check_timeout(settings.gates.compiler.timeout)
        .map_err(|e| Error::Usage(e.to_string()))?;
    Ok(())
}

/// Check a time limit: `--timeout` must be 1 s to [`MAX_TIMEOUT`].
pub fn check_timeout(timeout: Duration) -> Result<(), Error> {
    if timeout < Duration::from_secs(1) || timeout > MAX_TIMEOUT {
        return Err(Error::Invalid {
            setting: Setting::Timeout,
            rule: format!(
                " must be 1 to {} seconds (got {})",
                MAX_TIMEOUT.as_secs(),
                childproc::secs(timeout)
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_bounded() {
        assert!(check_timeout(Duration::from_secs(1)).is_ok());
        assert!(check_timeout(MAX_TIMEOUT).is_ok());
        for bad in [
            Duration::ZERO,
            Duration::from_millis(999),
            MAX_TIMEOUT + Duration::from_secs(1),
        ] {
            let e = check_timeout(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("`timeout` must be 1 to 86400 seconds (got "),
                "{e}"
            );
        }
    }
}
