//! A simulated GPU: a [`Device`] whose memory is host memory and whose kernels are Rust
//! closures, for tests and for the session benchmark (`runner/benches/session_host.rs`), where
//! no GPU is at hand.
//!
//! The time model ([`Model`]): every call costs a fixed latency, a copy between host and device
//! costs its bytes over the host link's bandwidth, a copy on the device its bytes over the
//! device's copy bandwidth, and a launch whatever its kernel says (the time a GPU event would
//! measure). The simulation does the work for real on the host (a memcpy, the kernel's
//! closure); the device's time is the larger of the modelled time and that real time, and with
//! [`Model::sleep`] the call sleeps for the modelled time the real work did not take, so a
//! caller's wall time looks like a GPU's. [`Ledger`] adds up the device's time and traffic:
//! what a caller did on the host is its wall time less [`Ledger::device_time`], and its CPU
//! time ([`process_cpu`]) less [`Ledger::device_cpu`] (the CPU time the simulation spent on the
//! calling thread: a kernel closure that runs on other threads is not counted there).

use crate::device::{
    Api, Device, DeviceError, DeviceInfo, DevicePtr, KernelHandle, Launch, Limits,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a simulated device's work takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    /// Host to device and device to host copies, bytes per second.
    pub host_link: f64,
    /// Copies from device memory to device memory, bytes (copied) per second.
    pub device_copy: f64,
    /// The fixed cost of every call (a copy's setup, a launch's latency).
    pub latency: Duration,
    /// Sleep for the modelled time the simulation's own work did not take.
    pub sleep: bool,
    /// The host's submission gap a timed launch shows when nothing was queued before it (no
    /// device-to-device copy since the last timed launch: the GPU idle when the start event
    /// and the launch are submitted), once per timed call. On an H200 an 11 us kernel timed
    /// so took 1.25-1.38x the time of one queued behind a copy.
    pub idle_gap: Duration,
}

impl Model {
    /// A discrete GPU today: 25 GB/s between host and device (PCIe 4 x16 to 5 x16 with pageable
    /// host memory), 2 TB/s device-to-device copies (HBM), 10 us per call; sleeping.
    pub fn gpu_like() -> Model {
        Model {
            host_link: 25e9,
            device_copy: 2e12,
            latency: Duration::from_micros(10),
            sleep: true,
            idle_gap: Duration::ZERO,
        }
    }

    /// No modelled time (tests): the device is as fast as the host does its work.
    pub fn instant() -> Model {
        Model {
            host_link: f64::INFINITY,
            device_copy: f64::INFINITY,
            latency: Duration::ZERO,
            sleep: false,
            idle_gap: Duration::ZERO,
        }
    }

    /// The modelled time of moving `bytes` at `bandwidth` bytes per second.
    fn transfer(&self, bytes: usize, bandwidth: f64) -> Duration {
        self.latency + Duration::from_secs_f64(bytes as f64 / bandwidth)
    }
}

/// What a simulated device did: its time and traffic, shared with whoever made it (the device
/// itself moves into a session).
#[derive(Debug, Default)]
pub struct Ledger {
    device_ns: AtomicU64,
    device_cpu_ns: AtomicU64,
    to_device: AtomicU64,
    to_host: AtomicU64,
    on_device: AtomicU64,
    launches: AtomicU64,
    allocated: AtomicU64,
}

impl Ledger {
    /// The device's time so far: per call, the larger of the modelled and the real time.
    pub fn device_time(&self) -> Duration {
        Duration::from_nanos(self.device_ns.load(Ordering::Relaxed))
    }

    /// The CPU time the simulation spent in the device's calls, on the calling thread.
    pub fn device_cpu(&self) -> Duration {
        Duration::from_nanos(self.device_cpu_ns.load(Ordering::Relaxed))
    }

    /// Bytes copied from the host to the device.
    pub fn bytes_to_device(&self) -> u64 {
        self.to_device.load(Ordering::Relaxed)
    }

    /// Bytes copied from the device to the host.
    pub fn bytes_to_host(&self) -> u64 {
        self.to_host.load(Ordering::Relaxed)
    }

    /// Bytes copied on the device.
    pub fn bytes_on_device(&self) -> u64 {
        self.on_device.load(Ordering::Relaxed)
    }

    /// Kernel launches.
    pub fn launches(&self) -> u64 {
        self.launches.load(Ordering::Relaxed)
    }

    /// Device memory allocated, bytes.
    pub fn allocated(&self) -> u64 {
        self.allocated.load(Ordering::Relaxed)
    }
}

/// A simulated device's memory: allocations by their base address.
#[derive(Debug, Default)]
pub struct Memory {
    buffers: HashMap<u64, Vec<u8>>,
    next: u64,
}

impl Memory {
    fn missing(p: DevicePtr) -> DeviceError {
        DeviceError::Invalid(format!("no allocation at {:#x}", p.0))
    }

    /// The allocation at `p` (a base address).
    pub fn get(&self, p: DevicePtr) -> Result<&[u8], DeviceError> {
        self.buffers
            .get(&p.0)
            .map(Vec::as_slice)
            .ok_or_else(|| Memory::missing(p))
    }

    /// The allocation at `p`, to write.
    pub fn get_mut(&mut self, p: DevicePtr) -> Result<&mut [u8], DeviceError> {
        self.buffers
            .get_mut(&p.0)
            .map(Vec::as_mut_slice)
            .ok_or_else(|| Memory::missing(p))
    }

    /// One allocation to read and another to write.
    pub fn read_write(
        &mut self,
        read: DevicePtr,
        write: DevicePtr,
    ) -> Result<(&[u8], &mut [u8]), DeviceError> {
        if read == write {
            return Err(DeviceError::Invalid(format!(
                "{:#x} is read and written at once",
                read.0
            )));
        }
        match self.buffers.get_disjoint_mut([&read.0, &write.0]) {
            [Some(r), Some(w)] => Ok((r.as_slice(), w.as_mut_slice())),
            [None, _] => Err(Memory::missing(read)),
            [_, None] => Err(Memory::missing(write)),
        }
    }

    /// A pointer argument's address.
    pub fn pointer(arg: &[u8]) -> Result<DevicePtr, DeviceError> {
        let bytes: [u8; 8] = arg
            .try_into()
            .map_err(|_| DeviceError::Invalid(format!("{} bytes are not a pointer", arg.len())))?;
        Ok(DevicePtr(u64::from_le_bytes(bytes)))
    }
}

/// A module loaded into a simulated device.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Its index in load order (its [`KernelHandle`]).
    pub index: usize,
    pub symbol: String,
    pub image: Vec<u8>,
}

/// What a launch does: it runs on the device's memory and returns the time a GPU event would
/// measure around it.
pub type Kernel = Box<
    dyn FnMut(&Loaded, &Launch, &[Vec<u8>], &mut Memory) -> Result<Duration, DeviceError> + Send,
>;

/// A [`Device`] simulated on the host (see the module's time model).
pub struct SimDevice {
    info: DeviceInfo,
    model: Model,
    ledger: Arc<Ledger>,
    memory: Memory,
    loaded: Vec<Loaded>,
    kernel: Kernel,
    /// A device-to-device copy was queued since the last timed launch ([`Model::idle_gap`]).
    queued: bool,
}

impl SimDevice {
    /// A device described by `info` whose launches run `kernel`.
    pub fn new(info: DeviceInfo, model: Model, kernel: Kernel) -> SimDevice {
        SimDevice {
            info,
            model,
            ledger: Arc::new(Ledger::default()),
            memory: Memory {
                buffers: HashMap::new(),
                next: 0x10_0000,
            },
            loaded: Vec::new(),
            queued: false,
            kernel,
        }
    }

    /// A device of `api` and `arch` with a current GPU's launch limits (1024 threads per block,
    /// 48 KiB of shared memory per block; wave64 for HIP, warps of 32 for CUDA).
    pub fn info(api: Api, arch: &str) -> DeviceInfo {
        DeviceInfo {
            api,
            ordinal: 0,
            name: format!("simulated {arch}"),
            arch: Some(arch.to_string()),
            limits: Limits {
                max_threads_per_block: 1024,
                max_block: [1024, 1024, 64],
                max_grid: [i32::MAX as u32, 65535, 65535],
                max_shared_per_block: 49152,
                warp_size: if api == Api::Hip { 64 } else { 32 },
            },
        }
    }

    /// What the device did so far (shared: it stays readable after the device moved).
    pub fn ledger(&self) -> Arc<Ledger> {
        Arc::clone(&self.ledger)
    }

    /// Account one call that started at `start` (wall, and CPU of this thread) and is modelled
    /// to take `modelled`.
    fn account(&self, start: (Instant, Option<Duration>), modelled: Duration) {
        let (start, cpu) = start;
        if let (Some(a), Some(b)) = (cpu, thread_cpu()) {
            self.ledger
                .device_cpu_ns
                .fetch_add(b.saturating_sub(a).as_nanos() as u64, Ordering::Relaxed);
        }
        let real = start.elapsed();
        if self.model.sleep && modelled > real {
            std::thread::sleep(modelled - real);
        }
        let t = modelled.max(real);
        self.ledger
            .device_ns
            .fetch_add(t.as_nanos() as u64, Ordering::Relaxed);
    }

    fn fits(what: &str, p: DevicePtr, have: usize, want: usize) -> Result<(), DeviceError> {
        if want > have {
            return Err(DeviceError::Invalid(format!(
                "{what} of {want} bytes at {:#x}, an allocation of {have}",
                p.0
            )));
        }
        Ok(())
    }
}

/// The CPU time of the calling thread so far (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu() -> Option<Duration> {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The CPU time of the whole process so far, every thread's (`CLOCK_PROCESS_CPUTIME_ID`).
pub fn process_cpu() -> Option<Duration> {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn cpu_clock(clock: libc::clockid_t) -> Option<Duration> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a valid out-pointer.
    if unsafe { libc::clock_gettime(clock, &mut t) } != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(t.tv_sec).ok()?,
        u32::try_from(t.tv_nsec).ok()?,
    ))
}

impl Device for SimDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn load(
        &mut self,
        image: &[u8],
        symbol: &str,
        _: &[u32],
        _: u32,
    ) -> Result<KernelHandle, DeviceError> {
        let start = (Instant::now(), thread_cpu());
        self.loaded.push(Loaded {
            index: self.loaded.len(),
            symbol: symbol.to_string(),
            image: image.to_vec(),
        });
        self.account(start, self.model.latency);
        Ok(KernelHandle(self.loaded.len() - 1))
    }

    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr, DeviceError> {
        let start = (Instant::now(), thread_cpu());
        let p = self.memory.next;
        self.memory.next += (bytes as u64).max(1).next_multiple_of(0x1000);
        self.memory.buffers.insert(p, vec![0; bytes]);
        self.ledger
            .allocated
            .fetch_add(bytes as u64, Ordering::Relaxed);
        self.account(start, self.model.latency);
        Ok(DevicePtr(p))
    }

    fn upload(&mut self, dst: DevicePtr, src: &[u8]) -> Result<(), DeviceError> {
        let start = (Instant::now(), thread_cpu());
        let buf = self.memory.get_mut(dst)?;
        SimDevice::fits("an upload", dst, buf.len(), src.len())?;
        buf[..src.len()].copy_from_slice(src);
        self.ledger
            .to_device
            .fetch_add(src.len() as u64, Ordering::Relaxed);
        self.account(start, self.model.transfer(src.len(), self.model.host_link));
        Ok(())
    }

    fn download(&mut self, src: DevicePtr, dst: &mut [u8]) -> Result<(), DeviceError> {
        let start = (Instant::now(), thread_cpu());
        let buf = self.memory.get(src)?;
        SimDevice::fits("a download", src, buf.len(), dst.len())?;
        dst.copy_from_slice(&buf[..dst.len()]);
        self.ledger
            .to_host
            .fetch_add(dst.len() as u64, Ordering::Relaxed);
        self.account(start, self.model.transfer(dst.len(), self.model.host_link));
        Ok(())
    }

    fn copy(&mut self, dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<(), DeviceError> {
        let start = (Instant::now(), thread_cpu());
        let (from, to) = self.memory.read_write(src, dst)?;
        SimDevice::fits("a copy", src, from.len(), bytes)?;
        SimDevice::fits("a copy", dst, to.len(), bytes)?;
        to[..bytes].copy_from_slice(&from[..bytes]);
        self.queued = true;
        self.ledger
            .on_device
            .fetch_add(bytes as u64, Ordering::Relaxed);
        self.account(start, self.model.transfer(bytes, self.model.device_copy));
        Ok(())
    }

    /// Compared where the memory is, in the device's time: both buffers read at the model's
    /// device-copy bandwidth.
    fn differ(
        &mut self,
        a: DevicePtr,
        b: DevicePtr,
        bytes: usize,
    ) -> Result<Option<bool>, DeviceError> {
        if bytes == 0 {
            return Ok(Some(false));
        }
        let start = (Instant::now(), thread_cpu());
        let x = self.memory.get(a)?;
        SimDevice::fits("a comparison", a, x.len(), bytes)?;
        let y = self.memory.get(b)?;
        SimDevice::fits("a comparison", b, y.len(), bytes)?;
        let differ = x[..bytes] != y[..bytes];
        self.ledger
            .on_device
            .fetch_add(2 * bytes as u64, Ordering::Relaxed);
        self.account(
            start,
            self.model.transfer(2 * bytes, self.model.device_copy),
        );
        Ok(Some(differ))
    }

    /// A simulated device's memory is the host's: as much as asked for.
    fn memory(&self) -> Option<(u64, u64)> {
        Some((1 << 40, 1 << 40))
    }

    fn launch_timed(
        &mut self,
        kernel: KernelHandle,
        launch: &Launch,
        args: &[Vec<u8>],
        count: u32,
    ) -> Result<f64, DeviceError> {
        let start = (Instant::now(), thread_cpu());
        let loaded = self
            .loaded
            .get(kernel.0)
            .ok_or_else(|| DeviceError::Invalid(format!("no kernel {}", kernel.0)))?;
        let count = count.max(1);
        let mut elapsed = if std::mem::take(&mut self.queued) {
            Duration::ZERO
        } else {
            self.model.idle_gap
        };
        for _ in 0..count {
            elapsed += (self.kernel)(loaded, launch, args, &mut self.memory)?;
        }
        self.ledger
            .launches
            .fetch_add(count as u64, Ordering::Relaxed);
        self.account(start, self.model.latency + elapsed);
        Ok(elapsed.as_secs_f64() * 1000.0 / count as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies move bytes and are accounted; the modelled time is what the ledger adds up, and a
    /// sleeping model makes the caller wait for it.
    #[test]
    fn copies_move_bytes_and_take_the_modelled_time() {
        let model = Model {
            host_link: 1e6,
            device_copy: 1e9,
            latency: Duration::ZERO,
            sleep: true,
            idle_gap: Duration::ZERO,
        };
        let double: Kernel = Box::new(|_, _, args, mem| {
            let (a, b) = mem.read_write(Memory::pointer(&args[0])?, Memory::pointer(&args[1])?)?;
            for (x, y) in a.iter().zip(b.iter_mut()) {
                *y = x.wrapping_mul(2);
            }
            Ok(Duration::from_millis(3))
        });
        let mut d = SimDevice::new(SimDevice::info(Api::Cuda, "sm_90"), model, double);
        let ledger = d.ledger();
        let (a, b) = (d.alloc(20_000).unwrap(), d.alloc(20_000).unwrap());
        let t = Instant::now();
        d.upload(a, &[3u8; 20_000]).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(20), "20 kB at 1 MB/s");
        let k = d.load(b"image", "k", &[], 0).unwrap();
        let ms = d
            .launch_timed(
                k,
                &Launch {
                    grid: [1; 3],
                    block: [1; 3],
                    shared_bytes: 0,
                },
                &[a.0.to_le_bytes().to_vec(), b.0.to_le_bytes().to_vec()],
                1,
            )
            .unwrap();
        assert_eq!(ms, 3.0);
        let mut out = vec![0u8; 10];
        d.download(b, &mut out).unwrap();
        assert_eq!(out, [6u8; 10]);
        d.copy(a, b, 20_000).unwrap();
        d.download(a, &mut out).unwrap();
        assert_eq!(out, [6u8; 10]);
        // 20 ms of upload and 3 ms of kernel (and 40 us of the rest).
        assert!(ledger.device_time() >= Duration::from_millis(23));
        assert!(
            ledger.device_cpu() > Duration::ZERO,
            "the memcpys' own time"
        );
        assert_eq!(
            (
                ledger.bytes_to_device(),
                ledger.bytes_to_host(),
                ledger.bytes_on_device(),
                ledger.launches(),
                ledger.allocated()
            ),
            (20_000, 20, 20_000, 1, 40_000)
        );
        // Out of bounds and unknown addresses are errors, never a panic.
        assert!(d.upload(a, &[0u8; 20_001]).is_err());
        assert!(d.download(DevicePtr(7), &mut out).is_err());
        assert!(d.copy(a, a, 1).is_err());
    }
}
