//! The capture itself, inside the packet callback of the chosen dispatch (before that packet
//! reaches the hardware): drain the queue with a barrier packet and a bounded wait, copy the
//! kernargs, the code object and every tracked allocation (failures recorded per region), and
//! write the snapshot with the packet's own geometry and segment sizes.

use crate::status::describe;
use crate::track::{Alloc, KernelInfo};
use crate::Tool;
use replay::aql;
use replay::ffi::*;
use replay::launch::Captured;
use replay::snapshot::write::SnapshotWriter;
use replay::snapshot::{DispatchFile, RegionRecord};
use std::ffi::c_void;
use std::time::Instant;

/// Regions are copied through a host buffer of at most this many bytes.
const CHUNK: usize = 64 << 20;

/// Whether this dispatch (the `index`-th of its kernel object) is the one to capture.
pub(crate) fn wanted(t: &Tool, symbol: &str, index: u64) -> bool {
    let Some(c) = &t.config else { return false };
    let Some(re) = &c.kernel else { return false };
    if index != c.dispatch {
        return false;
    }
    let name = replay::hsaco::kernel_name(symbol);
    re.is_match(symbol) || codeobj::metadata::demangle(name).is_some_and(|d| re.is_match(&d))
}

/// Capture the dispatch `pkt`; the outcome goes to the status.
pub(crate) unsafe fn capture(
    t: &Tool,
    pkt: &KernelDispatchPacket,
    queue: *mut Queue,
    info: &KernelInfo,
    index: u64,
    writer: PacketWriter,
) {
    let result = capture_inner(t, pkt, queue, info, index, writer);
    let mut st = t.status.lock().unwrap_or_else(|e| e.into_inner());
    match result {
        Ok((captured, None)) => st.captured = Some(captured),
        Ok((captured, Some(drain_error))) => {
            st.captured = Some(captured);
            st.capture_error = Some(drain_error);
        }
        Err(e) => st.capture_error = Some(e),
    }
}

/// Submit a barrier-AND packet behind everything already on the queue and wait (bounded) for
/// it: afterwards no earlier dispatch is still writing memory.
unsafe fn drain(t: &Tool, writer: PacketWriter) -> Result<(), String> {
    let r = &t.real;
    let (Some(create), Some(wait), Some(destroy)) =
        (r.signal_create, r.signal_wait_scacquire, r.signal_destroy)
    else {
        return Err("the runtime's table lacks hsa_signal_create/wait/destroy".into());
    };
    let mut sig = Signal::default();
    let s = create(1, 0, std::ptr::null(), &mut sig);
    if s != STATUS_SUCCESS {
        return Err(format!("hsa_signal_create failed: {}", describe(s)));
    }
    let barrier = aql::barrier_packet(sig);
    writer(&barrier as *const BarrierAndPacket as *const c_void, 1);
    let mut hz = 0u64;
    if let Some(f) = r.system_get_info {
        f(
            SYSTEM_INFO_TIMESTAMP_FREQUENCY,
            &mut hz as *mut u64 as *mut c_void,
        );
    }
    let hint = if hz == 0 {
        1_000_000
    } else {
        (hz / 100).max(1)
    };
    let timeout = t
        .config
        .as_ref()
        .map(|c| c.drain_timeout)
        .unwrap_or_default();
    let start = Instant::now();
    loop {
        let v = wait(sig, SIGNAL_CONDITION_LT, 1, hint, WAIT_STATE_BLOCKED);
        if v < 1 {
            destroy(sig);
            return Ok(());
        }
        if start.elapsed() >= timeout {
            // The barrier still refers to the signal: it is leaked, not destroyed.
            return Err(format!(
                "the barrier packet did not complete within {:.1} s",
                timeout.as_secs_f64()
            ));
        }
    }
}

/// A NUL-terminated string an info query wrote into `buf`.
fn c_string(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Agent name, ISA name and wavefront size of the queue's agent.
unsafe fn agent_facts(t: &Tool, queue: *mut Queue) -> (String, String, u32) {
    let agent = t
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .queues
        .get(&(queue as usize))
        .copied();
    let (Some(agent), Some(get)) = (agent, t.real.agent_get_info) else {
        return (String::new(), String::new(), 0);
    };
    let mut name = [0u8; 64];
    get(agent, AGENT_INFO_NAME, name.as_mut_ptr().cast());
    let mut wave = 0u32;
    get(
        agent,
        AGENT_INFO_WAVEFRONT_SIZE,
        &mut wave as *mut u32 as *mut c_void,
    );
    let mut isa = Isa::default();
    let mut isa_name = String::new();
    if get(agent, AGENT_INFO_ISA, &mut isa as *mut Isa as *mut c_void) == STATUS_SUCCESS {
        if let Some(f) = t.real.isa_get_info_alt {
            let mut len = 0u32;
            // HSA_ISA_INFO_NAME_LENGTH = 0
            f(isa, 0, &mut len as *mut u32 as *mut c_void);
            let mut buf = vec![0u8; len.clamp(1, 4096) as usize + 1];
            if f(isa, ISA_INFO_NAME, buf.as_mut_ptr().cast()) == STATUS_SUCCESS {
                isa_name = c_string(&buf);
            }
        }
    }
    (c_string(&name), isa_name, wave)
}

type Outcome = Result<(Captured, Option<String>), String>;

unsafe fn capture_inner(
    t: &Tool,
    pkt: &KernelDispatchPacket,
    queue: *mut Queue,
    info: &KernelInfo,
    index: u64,
    writer: PacketWriter,
) -> Outcome {
    let config = t.config.as_ref().ok_or("no configuration")?;
    let drain_error = drain(t, writer).err();

    let blob = match &info.blob {
        Some(b) => b.clone(),
        None => t
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .blob_defining(&info.symbol)
            .ok_or_else(|| {
                format!(
                    "the code object defining {} was never seen being loaded",
                    info.symbol
                )
            })?,
    };
    let mut kernarg_size = info.kernarg_size;
    if kernarg_size == 0 {
        kernarg_size = codeobj::read(&blob.bytes, "capture")
            .ok()
            .and_then(|cos| {
                cos.iter()
                    .flat_map(|c| c.kernels.iter())
                    .find(|k| replay::hsaco::is_kernel(k, &info.symbol))
                    .map(|k| k.meta.kernarg_segment_size)
            })
            .unwrap_or(0);
    }
    if kernarg_size > 0 && pkt.kernarg_address == 0 {
        return Err("the dispatch has kernel arguments but a null kernarg address".into());
    }
    // The application wrote the kernargs from the host before ringing the doorbell, so they
    // are host-readable.
    let kernarg = if kernarg_size == 0 {
        Vec::new()
    } else {
        std::slice::from_raw_parts(pkt.kernarg_address as *const u8, kernarg_size as usize).to_vec()
    };
    let allocs: Vec<(u64, Alloc)> = t
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .allocs
        .iter()
        .map(|(b, a)| (*b, a.clone()))
        .collect();
    let (agent_name, isa_name, wavefront_size) = agent_facts(t, queue);

    let mut w = SnapshotWriter::create(&config.out)
        .map_err(|e| format!("cannot create the snapshot: {e}"))?;
    let io = |e: std::io::Error| format!("cannot write the snapshot: {e}");
    w.write_kernarg(&kernarg).map_err(io)?;
    w.write_hsaco(&blob.bytes).map_err(io)?;
    let copy = t.real.memory_copy;
    let mut buf: Vec<u8> = Vec::new();
    let (mut bytes, mut failed) = (0u64, 0usize);
    for (base, a) in &allocs {
        let mut rec = RegionRecord::new(*base, a.size, a.kind);
        rec.handle = a.handle;
        rec.access = a.access;
        rec.contains_kernarg =
            kernarg_size > 0 && *base <= pkt.kernarg_address && pkt.kernarg_address < base + a.size;
        let mut sink = w.begin_region(rec);
        match copy {
            None => sink.fail("the runtime's table lacks hsa_memory_copy"),
            Some(copy) => {
                let mut off = 0u64;
                while off < a.size {
                    let n = (a.size - off).min(CHUNK as u64) as usize;
                    buf.resize(n, 0);
                    let s = copy(buf.as_mut_ptr().cast(), (base + off) as *const c_void, n);
                    if s != STATUS_SUCCESS {
                        sink.fail(format!(
                            "hsa_memory_copy of {n} bytes at {:#x} failed: {}",
                            base + off,
                            describe(s)
                        ));
                        break;
                    }
                    sink.write(&buf[..n]);
                    off += n as u64;
                }
            }
        }
        if w.end_region(sink) {
            bytes += a.size;
        } else {
            failed += 1;
        }
    }
    let name = replay::hsaco::kernel_name(&info.symbol);
    let dispatch = DispatchFile {
        snapshot_version: None,
        mangled_name: info.symbol.clone(),
        demangled_name: codeobj::metadata::demangle(name).unwrap_or_default(),
        agent_name,
        isa_name,
        wavefront_size,
        kernel_object: pkt.kernel_object,
        grid: [pkt.grid_size_x, pkt.grid_size_y, pkt.grid_size_z],
        block: [
            pkt.workgroup_size_x as u32,
            pkt.workgroup_size_y as u32,
            pkt.workgroup_size_z as u32,
        ],
        group_segment_size: pkt.group_segment_size,
        private_segment_size: pkt.private_segment_size,
        kernarg_size,
        dispatch_index: index,
        setup_dimensions: Some(aql::setup_dimensions(pkt.setup)),
        packet_header: Some(pkt.header),
        kernarg_address: Some(pkt.kernarg_address),
        kernarg_blake3: None,
        hsaco_blake3: None,
        hsaco_source: Some(blob.source.to_string()),
        drained: Some(drain_error.is_none()),
        drain_error: drain_error.clone(),
        tool: Some(crate::tool_name()),
    };
    let dir = w.finish(dispatch).map_err(io)?;
    Ok((
        Captured {
            dir: dir.display().to_string(),
            kernel: info.symbol.clone(),
            dispatch_index: index,
            regions: allocs.len(),
            bytes,
            failed_regions: failed,
        },
        drain_error,
    ))
}
