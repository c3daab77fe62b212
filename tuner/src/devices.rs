//! The devices lanes measure on: `--devices LIST|all`, each device's model (from the GPU
//! drivers' own files, [`runner::device::gpus`]; no GPU runtime is loaded), the host, and the
//! CPU's model where there is no GPU (the `command` backend on the CPU, whose lanes take
//! explicit ids).

use crate::error::Error;
use serde::{Deserialize, Serialize};

/// The device a lane measures on, as recorded with every decision it makes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Device {
    /// The device's model (`NVIDIA H100 80GB HBM3`, `AMD gfx90a`, or `cpu: ...` where the
    /// work runs on the CPU): decisions are keyed by it.
    pub model: String,
    /// The device id (`--devices`, or what Slurm gave the step); `null` for the default lane.
    pub id: Option<String>,
    pub host: String,
}

/// The host name (as `uname -n`).
pub fn host() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// `cpu: MODEL NAME` from `/proc/cpuinfo`, or `cpu` when it cannot be read.
pub fn cpu_model() -> String {
    let name = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .filter(|s| !s.is_empty());
    match name {
        Some(n) => format!("cpu: {n}"),
        None => "cpu".into(),
    }
}

impl Device {
    /// The device with id `id` on this machine (the first GPU for `None`; the CPU where there
    /// is no GPU).
    pub fn probe(id: Option<&str>) -> Device {
        let gpus = runner::device::gpus();
        let ordinal = id.and_then(|i| i.parse::<u32>().ok()).unwrap_or(0);
        let model = gpus
            .iter()
            .find(|g| g.ordinal == ordinal)
            .map(|g| g.model.clone())
            .unwrap_or_else(cpu_model);
        Device {
            model,
            id: id.map(str::to_string),
            host: host(),
        }
    }
}

/// The devices of `--devices`: `all` (every visible GPU; an error without one), or a
/// comma-separated list of ids (each a GPU of this machine where it has GPUs; any ids where
/// it has none, for work on the CPU). Lanes of different models are refused.
pub fn local(spec: &str) -> Result<Vec<Device>, Error> {
    let invalid = |rule: String| Error::Invalid {
        setting: crate::setting::Setting::Devices,
        rule,
    };
    let gpus = runner::device::gpus();
    let ids: Vec<String> = if spec.trim() == "all" {
        if gpus.is_empty() {
            return Err(invalid(
                " all: no GPU is visible here (no /sys/class/kfd topology, no /proc/driver/nvidia); name device ids instead (0,1)".into(),
            ));
        }
        gpus.iter().map(|g| g.ordinal.to_string()).collect()
    } else {
        let mut ids = Vec::new();
        for part in spec.split(',') {
            let id = part.trim();
            if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid(format!(
                    " takes `all` or device numbers separated by commas (0,1,2), not `{spec}`"
                )));
            }
            if ids.iter().any(|x| x == id) {
                return Err(invalid(format!(" names device {id} twice")));
            }
            ids.push(id.to_string());
        }
        ids
    };
    if ids.len() > crate::limits::MAX_LANES {
        return Err(invalid(format!(
            " names {} devices; at most {}",
            ids.len(),
            crate::limits::MAX_LANES
        )));
    }
    if !gpus.is_empty() {
        for id in &ids {
            let n: u32 = id.parse().unwrap_or(u32::MAX);
            if !gpus.iter().any(|g| g.ordinal == n) {
                return Err(invalid(format!(
                    ": there is no GPU {id} here (GPUs: {})",
                    gpus.iter()
                        .map(|g| format!("{} {}", g.ordinal, g.model))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    let devices: Vec<Device> = ids.iter().map(|id| Device::probe(Some(id))).collect();
    same_model(&devices)?;
    Ok(devices)
}

/// One tune, one model: lanes whose model differs from the first lane's are refused, with
/// the list of models.
pub fn same_model(devices: &[Device]) -> Result<(), Error> {
    let Some(first) = devices.first() else {
        return Ok(());
    };
    if devices.iter().all(|d| d.model == first.model) {
        return Ok(());
    }
    let shown: Vec<String> = devices
        .iter()
        .map(|d| format!("{} {}: {}", d.host, d.id.as_deref().unwrap_or("-"), d.model))
        .collect();
    Err(Error::Usage(format!(
        "the devices are of different models ({}); one tune measures one model: choose devices of the first one's model, {}",
        shown.join("; "),
        first.model
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists_are_checked() {
        for bad in ["", "0,,1", "a", "0,-1", "1 2"] {
            assert!(local(bad).is_err(), "{bad}");
        }
        assert!(local("0,0").unwrap_err().to_string().contains("twice"));
        let d = |m: &str, id: &str| Device {
            model: m.into(),
            id: Some(id.into()),
            host: "h".into(),
        };
        assert!(same_model(&[d("A", "0"), d("A", "1")]).is_ok());
        let e = same_model(&[d("A", "0"), d("B", "1")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("h 0: A; h 1: B"), "{e}");
    }
}
