//! NVIDIA GPUs through the CUDA driver API (`libcuda.so.1`), loaded at run time by `cudarc`
//! (dynamic loading, CUDA 12.0 symbols): a cubin or PTX is loaded with `cuModuleLoadData` (PTX
//! JIT-compiled by the driver), so the GPU machine needs the driver only. Buffers are compared
//! on the device by a small kernel of hip-unroll's own (`cuda/differ.ptx`), checked on known
//! buffers before its first answer is trusted.

use crate::device::{
    bounded, differ_on, wait_until, Api, Compares, Device, DeviceError, DeviceInfo, DevicePtr,
    Differ, KernelHandle, Launch, Limits,
};
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUdevice_attribute as A};
use std::ffi::{c_void, CString};
use std::time::Duration;

fn call(name: &'static str) -> impl Fn(DriverError) -> DeviceError {
    move |e: DriverError| {
        let n = e
            .error_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{:?}", e.0));
        let detail = e
            .error_string()
            .map(|s| format!(" ({})", s.to_string_lossy()))
            .unwrap_or_default();
        DeviceError::Call {
            call: name,
            name: n,
            detail,
        }
    }
}

/// Whether libcuda can be loaded at all (cudarc would panic on a missing library).
fn driver_present() -> bool {
    // SAFETY: tries to dlopen the driver's library names.
    unsafe { sys::is_culib_present() }
}

/// Initialise the driver and count its devices (bounded by `timeout`).
pub fn device_count(timeout: Duration) -> Result<i32, DeviceError> {
    if !driver_present() {
        return Err(DeviceError::NoRuntime(
            Api::Cuda,
            "no NVIDIA driver: cannot load libcuda.so.1; install the NVIDIA driver".into(),
        ));
    }
    let r = bounded("cuInit", timeout, || {
        result::init().and_then(|_| result::device::get_count())
    })?;
    match r {
        Ok(n) if n > 0 => Ok(n),
        Ok(_) => Err(DeviceError::Unavailable(
            "no NVIDIA GPU: the CUDA driver found no device".into(),
        )),
        Err(e) => Err(DeviceError::Unavailable(format!(
            "no NVIDIA GPU: {}",
            call("cuInit")(e)
        ))),
    }
}

struct Loaded {
    function: sys::CUfunction,
    params: usize,
}

/// The on-device comparison kernel ([`Device::differ`]): its PTX, sm_50 and later.
pub const DIFFER_PTX: &str = include_str!("cuda/differ.ptx");

/// One CUDA device (its primary context), its modules, allocations and timing events.
pub struct CudaDevice {
    info: DeviceInfo,
    device: sys::CUdevice,
    ctx: sys::CUcontext,
    timeout: Duration,
    modules: Vec<sys::CUmodule>,
    kernels: Vec<Loaded>,
    allocations: Vec<sys::CUdeviceptr>,
    events: (sys::CUevent, sys::CUevent),
    poisoned: bool,
    /// `None`: not loaded yet; `Some(None)`: it could not be loaded or failed its self-check
    /// (buffers are then read back by the caller).
    differ: Option<Option<Differ>>,
}

impl CudaDevice {
    pub fn open(ordinal: i32, timeout: Duration) -> Result<CudaDevice, DeviceError> {
        let n = device_count(timeout)?;
        if ordinal < 0 || ordinal >= n {
            return Err(DeviceError::Unavailable(format!(
                "no CUDA device {ordinal} (there are {n})"
            )));
        }
        let device = result::device::get(ordinal).map_err(call("cuDeviceGet"))?;
        // SAFETY: a valid device; the context is released in Drop.
        let ctx = unsafe { result::primary_ctx::retain(device) }
            .map_err(call("cuDevicePrimaryCtxRetain"))?;
        unsafe { result::ctx::set_current(ctx) }.map_err(call("cuCtxSetCurrent"))?;
        let attr = |a: A| -> Result<u32, DeviceError> {
            // SAFETY: a valid device and attribute.
            unsafe { result::device::get_attribute(device, a) }
                .map(|v| v.max(0) as u32)
                .map_err(call("cuDeviceGetAttribute"))
        };
        let limits = Limits {
            max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block: [
                attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid: [
                attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            max_shared_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        };
        let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let name = result::device::get_name(device).map_err(call("cuDeviceGetName"))?;
        let ev = || {
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
                .map_err(call("cuEventCreate"))
        };
        let events = (ev()?, ev()?);
        Ok(CudaDevice {
            info: DeviceInfo {
                api: Api::Cuda,
                ordinal,
                name,
                arch: Some(format!("sm_{major}{minor}")),
                limits,
            },
            device,
            ctx,
            timeout,
            modules: Vec::new(),
            kernels: Vec::new(),
            allocations: Vec::new(),
            events,
            poisoned: false,
            differ: None,
        })
    }

    fn live(&self) -> Result<(), DeviceError> {
        if self.poisoned {
            return Err(DeviceError::Invalid(
                "the device timed out earlier; it is not used again".into(),
            ));
        }
        // SAFETY: the retained primary context; current on whichever thread drives the device.
        unsafe { result::ctx::set_current(self.ctx) }.map_err(call("cuCtxSetCurrent"))
    }
}

impl Compares for CudaDevice {
    fn differ_slot(&mut self) -> &mut Option<Option<Differ>> {
        &mut self.differ
    }
    fn differ_image(&mut self) -> Option<Vec<u8>> {
        Some(DIFFER_PTX.as_bytes().to_vec())
    }
    fn poisoned(&self) -> bool {
        self.poisoned
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn load(
        &mut self,
        image: &[u8],
        symbol: &str,
        param_offsets: &[u32],
        _kernarg_size: u32,
    ) -> Result<KernelHandle, DeviceError> {
        self.live()?;
        // PTX is text: the driver wants it NUL-terminated.
        let mut ptx = image.to_vec();
        if ptx.last() != Some(&0) {
            ptx.push(0);
        }
        let name = CString::new(symbol)
            .map_err(|_| DeviceError::Invalid(format!("kernel name `{symbol}` has a NUL byte")))?;
        // SAFETY: a NUL-terminated image; the module stays loaded until Drop.
        let module = unsafe { result::module::load_data(ptx.as_ptr().cast()) }
            .map_err(call("cuModuleLoadData"))?;
        self.modules.push(module);
        let function = unsafe { result::module::get_function(module, name) }
            .map_err(call("cuModuleGetFunction"))?;
        self.kernels.push(Loaded {
            function,
            params: param_offsets.len(),
        });
        Ok(KernelHandle(self.kernels.len() - 1))
    }

    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr, DeviceError> {
        self.live()?;
        // SAFETY: freed in Drop.
        let p = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(call("cuMemAlloc"))?;
        self.allocations.push(p);
        Ok(DevicePtr(p))
    }

    fn upload(&mut self, dst: DevicePtr, src: &[u8]) -> Result<(), DeviceError> {
        self.live()?;
        // SAFETY: `dst` holds at least `src.len()` bytes (the caller's contract).
        unsafe { result::memcpy_htod_sync(dst.0, src) }.map_err(call("cuMemcpyHtoD"))
    }

    fn download(&mut self, src: DevicePtr, dst: &mut [u8]) -> Result<(), DeviceError> {
        self.live()?;
        // SAFETY: as `upload`.
        unsafe { result::memcpy_dtoh_sync(dst, src.0) }.map_err(call("cuMemcpyDtoH"))
    }

    fn copy(&mut self, dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<(), DeviceError> {
        self.live()?;
        // SAFETY: as `upload`.
        unsafe { result::memcpy_dtod_sync(dst.0, src.0, bytes) }.map_err(call("cuMemcpyDtoD"))
    }

    fn differ(
        &mut self,
        a: DevicePtr,
        b: DevicePtr,
        bytes: usize,
    ) -> Result<Option<bool>, DeviceError> {
        self.live()?;
        differ_on(self, a, b, bytes)
    }

    fn memory(&self) -> Option<(u64, u64)> {
        self.live().ok()?;
        let (free, total) = result::mem_get_info().ok()?;
        Some((free as u64, total as u64))
    }

    fn launch_timed(
        &mut self,
        kernel: KernelHandle,
        launch: &Launch,
        args: &[Vec<u8>],
        count: u32,
    ) -> Result<f64, DeviceError> {
        let count = count.max(1);
        self.live()?;
        let k = self
            .kernels
            .get(kernel.0)
            .ok_or_else(|| DeviceError::Invalid("unknown kernel handle".into()))?;
        if args.len() != k.params {
            return Err(DeviceError::Invalid(format!(
                "{} arguments for {} parameters",
                args.len(),
                k.params
            )));
        }
        // One pointer per parameter to its bytes (8-byte aligned copies).
        let mut storage: Vec<Vec<u64>> = args
            .iter()
            .map(|a| {
                let mut w = vec![0u64; a.len().div_ceil(8).max(1)];
                // SAFETY: `w` has at least `a.len()` bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(a.as_ptr(), w.as_mut_ptr().cast::<u8>(), a.len())
                };
                w
            })
            .collect();
        let mut params: Vec<*mut c_void> =
            storage.iter_mut().map(|w| w.as_mut_ptr().cast()).collect();
        let (start, stop) = self.events;
        let stream = std::ptr::null_mut();
        // SAFETY: a live function and events; parameters outlive the call (the driver copies them).
        unsafe {
            result::event::record(start, stream).map_err(call("cuEventRecord"))?;
            for _ in 0..count {
                result::launch_kernel(
                    k.function,
                    (launch.grid[0], launch.grid[1], launch.grid[2]),
                    (launch.block[0], launch.block[1], launch.block[2]),
                    launch.shared_bytes,
                    stream,
                    &mut params,
                )
                .map_err(call("cuLaunchKernel"))?;
            }
            result::event::record(stop, stream).map_err(call("cuEventRecord"))?;
        }
        let waited = wait_until("the kernel", self.timeout, || {
            // SAFETY: a live event.
            match unsafe { result::event::query(stop) } {
                Ok(()) => Ok(true),
                Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_READY)) => Ok(false),
                Err(e) => Err(call("cuEventQuery")(e)),
            }
        });
        if let Err(e) = waited {
            self.poisoned = matches!(e, DeviceError::Timeout { .. });
            return Err(e);
        }
        // SAFETY: both events completed.
        let ms =
            unsafe { result::event::elapsed(start, stop) }.map_err(call("cuEventElapsedTime"))?;
        Ok(ms as f64 / count as f64)
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        if self.poisoned {
            return;
        }
        // SAFETY: every handle was created by this device and is released once.
        unsafe {
            let _ = result::ctx::set_current(self.ctx);
            for p in self.allocations.drain(..) {
                let _ = result::free_sync(p);
            }
            for m in self.modules.drain(..) {
                let _ = result::module::unload(m);
            }
            let _ = result::event::destroy(self.events.0);
            let _ = result::event::destroy(self.events.1);
            let _ = result::primary_ctx::release(self.device);
        }
    }
}
