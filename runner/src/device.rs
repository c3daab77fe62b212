//! The GPU a bench runs on, behind one trait with two implementations loaded at run time:
//! [`crate::hip`] (libamdhip64) and [`crate::cuda`] (libcuda through cudarc). Every wait is
//! bounded: a launch that does not finish within the timeout is an error, never a hang, and a
//! device that timed out is not touched again (its memory is left to the process exit).

use serde::Serialize;
use std::time::Duration;

/// Which runtime a device comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    Hip,
    Cuda,
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Api::Hip => "hip",
            Api::Cuda => "cuda",
        })
    }
}

/// What the runner needs to know about a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceInfo {
    pub api: Api,
    pub ordinal: i32,
    pub name: String,
    /// `gfx90a`, `sm_90`; `None` when it cannot be told (then `--arch` is required).
    pub arch: Option<String>,
    pub limits: Limits,
}

/// Launch limits of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    pub max_threads_per_block: u32,
    pub max_block: [u32; 3],
    pub max_grid: [u32; 3],
    /// Shared memory (LDS) per block, bytes.
    pub max_shared_per_block: u32,
    pub warp_size: u32,
}

impl Limits {
    /// Whether a launch fits the device; the error names the limit.
    pub fn check(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        static_shared: u32,
    ) -> Result<(), String> {
        let axes = ["x", "y", "z"];
        for i in 0..3 {
            if block[i] > self.max_block[i] {
                return Err(format!(
                    "block.{} = {} is over the device's maximum of {}",
                    axes[i], block[i], self.max_block[i]
                ));
            }
            if grid[i] > self.max_grid[i] {
                return Err(format!(
                    "grid.{} = {} is over the device's maximum of {}",
                    axes[i], grid[i], self.max_grid[i]
                ));
            }
        }
        let threads: u64 = block.iter().map(|&b| b as u64).product();
        if threads > self.max_threads_per_block as u64 {
            return Err(format!(
                "block of {threads} threads is over the device's maximum of {}",
                self.max_threads_per_block
            ));
        }
        let lds = shared as u64 + static_shared as u64;
        if lds > self.max_shared_per_block as u64 {
            return Err(format!(
                "{lds} bytes of shared memory per block ({shared} dynamic + {static_shared} static) is over the device's maximum of {}",
                self.max_shared_per_block
            ));
        }
        Ok(())
    }
}

/// A device allocation (an address in the device's space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevicePtr(pub u64);

/// A loaded kernel of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelHandle(pub usize);

/// How one launch looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
}

/// Why a device call failed.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// No usable library or device: one line for the user, exit 2.
    #[error("{0}")]
    Unavailable(String),
    /// The runtime library of this API cannot be loaded (the binary may name another backend).
    #[error("{1}")]
    NoRuntime(Api, String),
    /// A runtime call returned an error.
    #[error("{call} failed: {name}{detail}")]
    Call {
        call: &'static str,
        name: String,
        /// `: description` or empty.
        detail: String,
    },
    #[error("{what} did not finish within {timeout:?} (the device is left as it is)")]
    Timeout { what: String, timeout: Duration },
    #[error("{0}")]
    Invalid(String),
}

/// One GPU, as the runner drives it. Calls are in order on one stream.
pub trait Device {
    fn info(&self) -> &DeviceInfo;
    /// Load a module (a code object or PTX text, NUL-terminated by the implementation) and
    /// find `symbol` in it. `param_offsets`/`kernarg_size` lay out the argument block where the
    /// runtime wants one (HIP); CUDA takes one pointer per parameter.
    fn load(
        &mut self,
        image: &[u8],
        symbol: &str,
        param_offsets: &[u32],
        kernarg_size: u32,
    ) -> Result<KernelHandle, DeviceError>;
    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr, DeviceError>;
    fn upload(&mut self, dst: DevicePtr, src: &[u8]) -> Result<(), DeviceError>;
    fn download(&mut self, src: DevicePtr, dst: &mut [u8]) -> Result<(), DeviceError>;
    fn copy(&mut self, dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<(), DeviceError>;
    /// Launch `kernel` `count` times back to back (at least once) with one byte string per
    /// parameter, timed by one pair of GPU events around the batch; waits (bounded by the
    /// timeout) and returns the mean milliseconds per launch. A batch shares one launch's
    /// event jitter among its launches: what makes a short kernel's samples steady.
    fn launch_timed(
        &mut self,
        kernel: KernelHandle,
        launch: &Launch,
        args: &[Vec<u8>],
        count: u32,
    ) -> Result<f64, DeviceError>;
    /// Whether the first `bytes` of `a` and `b` differ, compared on the device at its own
    /// memory speed (nothing is copied to the host); `None` where the device cannot compare
    /// (the caller reads the buffers back instead). `bytes == 0` asks whether it can.
    fn differ(
        &mut self,
        a: DevicePtr,
        b: DevicePtr,
        bytes: usize,
    ) -> Result<Option<bool>, DeviceError> {
        let _ = (a, b, bytes);
        Ok(None)
    }
    /// Free and total device memory in bytes, where the device says: what the session's
    /// optional device copies (for [`Device::differ`]) may take.
    fn memory(&self) -> Option<(u64, u64)> {
        None
    }
}

/// A loaded comparison kernel (`hip_unroll_differ(a, b, bytes, flag)`: sets the 32-bit `*flag`
/// when the first `bytes` of `a` and `b` differ) and its flag, for [`Device::differ`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Differ {
    kernel: KernelHandle,
    flag: DevicePtr,
}

impl Differ {
    /// Load `image` (PTX or a code object holding `hip_unroll_differ`) into `dev` and check it
    /// on known buffers (equal; one differing word; one differing byte after the last whole
    /// word): `None` when an answer is wrong (then it is never used).
    pub(crate) fn load(dev: &mut dyn Device, image: &[u8]) -> Result<Option<Differ>, DeviceError> {
        let kernel = dev.load(image, "hip_unroll_differ", &[0, 8, 16, 24], 32)?;
        let flag = dev.alloc(4)?;
        let d = Differ { kernel, flag };
        let a: Vec<u8> = (0..4099u32).map(|i| (i % 251) as u8).collect();
        let mut word = a.clone();
        word[2048] ^= 0x10;
        let mut tail = a.clone();
        tail[4098] ^= 1;
        let pa = dev.alloc(a.len())?;
        let pb = dev.alloc(a.len())?;
        dev.upload(pa, &a)?;
        for (b, want) in [(&a, false), (&word, true), (&tail, true)] {
            dev.upload(pb, b)?;
            if d.compare(dev, pa, pb, a.len())? != want {
                return Ok(None);
            }
        }
        Ok(Some(d))
    }

    /// One launch over `bytes` bytes of `a` and `b` (grid-stride, at most 16384 blocks of
    /// 256): whether they differ.
    pub(crate) fn compare(
        self,
        dev: &mut dyn Device,
        a: DevicePtr,
        b: DevicePtr,
        bytes: usize,
    ) -> Result<bool, DeviceError> {
        dev.upload(self.flag, &[0; 4])?;
        let words = (bytes / 4).max(1);
        let blocks = u32::try_from(words.div_ceil(256).min(16_384)).unwrap_or(16_384);
        let launch = Launch {
            grid: [blocks, 1, 1],
            block: [256, 1, 1],
            shared_bytes: 0,
        };
        let args = [a.0, b.0, bytes as u64, self.flag.0].map(|v| v.to_le_bytes().to_vec());
        dev.launch_timed(self.kernel, &launch, &args, 1)?;
        let mut flag = [0u8; 4];
        dev.download(self.flag, &mut flag)?;
        Ok(flag != [0; 4])
    }
}

/// A device that keeps its own comparison kernel ([`Differ`]) for [`Device::differ`]
/// ([`differ_on`]).
pub(crate) trait Compares: Device {
    /// Where the kernel is kept: `None` before its first use, `Some(None)` when it could not be
    /// had, loaded, or failed its self-check (then every check reads back).
    fn differ_slot(&mut self) -> &mut Option<Option<Differ>>;
    /// The kernel's image for this device (PTX, or a code object for its architecture); `None`
    /// where it cannot be had.
    fn differ_image(&mut self) -> Option<Vec<u8>>;
    /// Set after a timeout: nothing is called on the device again.
    fn poisoned(&self) -> bool;
}

/// [`Device::differ`] of a [`Compares`] device (once its own liveness is checked): the kernel
/// loaded and self-checked on first use, then one launch per comparison.
pub(crate) fn differ_on<D: Compares>(
    dev: &mut D,
    a: DevicePtr,
    b: DevicePtr,
    bytes: usize,
) -> Result<Option<bool>, DeviceError> {
    let d = match *dev.differ_slot() {
        Some(d) => d,
        None => {
            let loaded = match dev.differ_image() {
                Some(image) => Differ::load(dev, &image),
                None => Ok(None),
            };
            let d = match loaded {
                Ok(d) => d,
                // A device that timed out is not used again; any other failure: no comparison.
                Err(e) if dev.poisoned() => return Err(e),
                Err(_) => None,
            };
            *dev.differ_slot() = Some(d);
            d
        }
    };
    let Some(d) = d else {
        return Ok(None);
    };
    if bytes == 0 {
        return Ok(Some(false));
    }
    d.compare(dev, a, b, bytes).map(Some)
}

/// Run `f` on another thread and give up after `timeout`: for runtime entry points that could
/// block on a broken driver (initialisation). A thread that never returns is left behind.
pub(crate) fn bounded<T: Send + 'static>(
    what: &str,
    timeout: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, DeviceError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("hip-unroll-gpu-init".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| DeviceError::Unavailable(format!("cannot start a thread: {e}")))?;
    rx.recv_timeout(timeout).map_err(|_| DeviceError::Timeout {
        what: what.to_string(),
        timeout,
    })
}

/// Poll `ready` until it says done, an error, or the deadline: never a blocking wait.
pub(crate) fn wait_until(
    what: &str,
    timeout: Duration,
    mut ready: impl FnMut() -> Result<bool, DeviceError>,
) -> Result<(), DeviceError> {
    let start = std::time::Instant::now();
    let mut spins = 0u32;
    loop {
        if ready()? {
            return Ok(());
        }
        if start.elapsed() > timeout {
            return Err(DeviceError::Timeout {
                what: what.to_string(),
                timeout,
            });
        }
        spins += 1;
        if spins < 1000 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// A GPU of this machine, as the kernel drivers list it (no GPU runtime is loaded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gpu {
    /// The runtime's device number (HIP's and CUDA's order: the drivers' node order).
    pub ordinal: u32,
    /// `AMD gfx90a (0x740c)`, `NVIDIA H100 80GB HBM3`.
    pub model: String,
}

/// The GPUs the drivers list: AMD from the kernel driver's topology
/// (`/sys/class/kfd/kfd/topology/nodes`, GPU nodes in node order, as HIP numbers them), else
/// NVIDIA from `/proc/driver/nvidia/gpus` (in PCI order; CUDA's default order puts the fastest
/// first, which is the same order for GPUs of one model). Empty without a GPU driver.
pub fn gpus() -> Vec<Gpu> {
    let amd = amd_gpus(std::path::Path::new(KFD_NODES));
    if !amd.is_empty() {
        return amd;
    }
    nvidia_gpus(std::path::Path::new("/proc/driver/nvidia/gpus"))
}

/// The GPU nodes of the AMD kernel driver's topology (`nodes/N/properties` with a non-zero
/// `gfx_target_version`), in node order: (gfx version, PCI device id).
fn amd_nodes(nodes: &std::path::Path) -> Vec<(u32, Option<u64>)> {
    let Ok(dir) = std::fs::read_dir(nodes) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, u32, Option<u64>)> = dir
        .filter_map(|e| {
            let e = e.ok()?;
            let id: u32 = e.file_name().to_str()?.parse().ok()?;
            let props = std::fs::read_to_string(e.path().join("properties")).ok()?;
            let field = |name: &str| -> Option<u64> {
                props
                    .lines()
                    .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))?
                    .trim()
                    .parse()
                    .ok()
            };
            let version = u32::try_from(field("gfx_target_version")?)
                .ok()
                .filter(|&v| v != 0)?;
            Some((id, version, field("device_id")))
        })
        .collect();
    found.sort_unstable();
    found.into_iter().map(|(_, v, d)| (v, d)).collect()
}

fn amd_gpus(nodes: &std::path::Path) -> Vec<Gpu> {
    amd_nodes(nodes)
        .into_iter()
        .enumerate()
        .map(|(i, (version, device))| {
            let gfx = gfx_name(version);
            Gpu {
                ordinal: i as u32,
                model: match device {
                    Some(d) => format!("AMD {gfx} ({d:#x})"),
                    None => format!("AMD {gfx}"),
                },
            }
        })
        .collect()
}

/// The architecture of AMD GPU `ordinal` (HIP's numbering: the topology's GPU nodes in node
/// order) from the kernel driver (`gfx_target_version 90010` -> `gfx90a`), as ROCm's tools
/// read it; `None` without the topology.
pub fn amd_arch(ordinal: i32) -> Option<String> {
    let nodes = amd_nodes(std::path::Path::new(KFD_NODES));
    let (v, _) = *nodes.get(usize::try_from(ordinal).ok()?)?;
    Some(gfx_name(v))
}

/// Where the AMD kernel driver lists its nodes.
const KFD_NODES: &str = "/sys/class/kfd/kfd/topology/nodes";

/// `90010` -> `gfx90a`, `90402` -> `gfx942`, `110000` -> `gfx1100`.
pub fn gfx_name(target_version: u32) -> String {
    let major = target_version / 10000;
    let minor = (target_version / 100) % 100;
    let stepping = target_version % 100;
    format!("gfx{major}{minor:x}{stepping:x}")
}

fn nvidia_gpus(dir: &std::path::Path) -> Vec<Gpu> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let found: Vec<(String, String)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let info = std::fs::read_to_string(e.path().join("information")).ok()?;
            let model = info
                .lines()
                .find_map(|l| l.strip_prefix("Model:"))?
                .trim()
                .to_string();
            Some((e.file_name().to_string_lossy().into_owned(), model))
        })
        .collect();
    numbered(found)
}

/// The GPUs in the order of their driver keys, numbered from 0 as the runtimes number them.
fn numbered<K: Ord>(mut found: Vec<(K, String)>) -> Vec<Gpu> {
    found.sort();
    found
        .into_iter()
        .enumerate()
        .map(|(i, (_, model))| Gpu {
            ordinal: i as u32,
            model,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_threads_per_block: 1024,
            max_block: [1024, 1024, 64],
            max_grid: [2147483647, 65535, 65535],
            max_shared_per_block: 65536,
            warp_size: 64,
        }
    }

    #[test]
    fn limits_name_what_is_over() {
        let l = limits();
        assert!(l.check([1024, 1, 1], [256, 1, 1], 0, 1024).is_ok());
        assert_eq!(
            l.check([1, 1, 1], [2048, 1, 1], 0, 0).unwrap_err(),
            "block.x = 2048 is over the device's maximum of 1024"
        );
        assert_eq!(
            l.check([1, 70000, 1], [1, 1, 1], 0, 0).unwrap_err(),
            "grid.y = 70000 is over the device's maximum of 65535"
        );
        assert_eq!(
            l.check([1, 1, 1], [64, 32, 1], 0, 0).unwrap_err(),
            "block of 2048 threads is over the device's maximum of 1024"
        );
        assert!(l
            .check([1, 1, 1], [64, 1, 1], 65536, 16)
            .unwrap_err()
            .contains("65552 bytes of shared memory"));
    }

    #[test]
    fn waits_are_bounded() {
        let e = wait_until("a launch", Duration::from_millis(20), || Ok(false)).unwrap_err();
        assert!(matches!(e, DeviceError::Timeout { .. }), "{e}");
        let e = bounded("hipInit", Duration::from_millis(20), || {
            std::thread::sleep(Duration::from_secs(5))
        })
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("hipInit did not finish within 20ms"),
            "{e}"
        );
        assert_eq!(bounded("x", Duration::from_secs(5), || 7).unwrap(), 7);
    }
}

#[cfg(test)]
mod gpu_tests {
    use super::*;

    #[test]
    fn gfx_names() {
        assert_eq!(gfx_name(90010), "gfx90a");
        assert_eq!(gfx_name(90402), "gfx942");
        assert_eq!(gfx_name(110000), "gfx1100");
        assert_eq!(gfx_name(90008), "gfx908");
    }

    #[test]
    fn gpus_are_read_from_the_drivers_files() {
        let d = tempfile::tempdir().unwrap();
        let nodes = d.path().join("nodes");
        for (n, props) in [
            ("0", "cpu_cores_count 16\ngfx_target_version 0\n"),
            ("2", "gfx_target_version 90010\ndevice_id 29708\n"),
            ("1", "gfx_target_version 90010\ndevice_id 29708\n"),
        ] {
            std::fs::create_dir_all(nodes.join(n)).unwrap();
            std::fs::write(nodes.join(n).join("properties"), props).unwrap();
        }
        let g = amd_gpus(&nodes);
        assert_eq!(
            g,
            vec![
                Gpu {
                    ordinal: 0,
                    model: "AMD gfx90a (0x740c)".into()
                },
                Gpu {
                    ordinal: 1,
                    model: "AMD gfx90a (0x740c)".into()
                }
            ]
        );
        let nv = d.path().join("nv");
        for (bus, model) in [
            ("0000:b1:00.0", "NVIDIA H200"),
            ("0000:19:00.0", "NVIDIA H100 80GB HBM3"),
        ] {
            std::fs::create_dir_all(nv.join(bus)).unwrap();
            std::fs::write(
                nv.join(bus).join("information"),
                format!("Model: \t\t {model}\nIRQ:   \t\t 34\n"),
            )
            .unwrap();
        }
        let g = nvidia_gpus(&nv);
        assert_eq!(g[0].model, "NVIDIA H100 80GB HBM3");
        assert_eq!(g[1].model, "NVIDIA H200");
        assert!(amd_gpus(&d.path().join("none")).is_empty());
    }
}
