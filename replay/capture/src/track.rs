//! What capture knows about the process, kept by the API hooks: every live device allocation
//! (no cap), the code objects loaded and which kernels each defines, the kernel objects the
//! application looked up, the queues it created, and how often each kernel was dispatched.
//! Plain data behind one mutex; no runtime calls happen while it is locked.

use replay::ffi::Agent;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A live allocation the kernel might read or write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alloc {
    pub size: u64,
    /// `pool`, `vmem`, `memory_allocate`, `lock`, `ipc`, `interop`.
    pub kind: &'static str,
    pub handle: u64,
    pub access: u32,
}

/// A code object as the runtime received it.
#[derive(Debug)]
pub struct Blob {
    pub bytes: Vec<u8>,
    /// `memory`, `file`, `deserialize`.
    pub source: &'static str,
    /// The kernel names (metadata `.name`) it defines, read with codeobj.
    pub kernels: Vec<String>,
}

impl Blob {
    pub fn new(bytes: Vec<u8>, source: &'static str) -> Arc<Blob> {
        let kernels = codeobj::read(&bytes, "capture")
            .map(|cos| {
                cos.iter()
                    .flat_map(|c| c.kernels.iter().map(|k| k.meta.name.clone()))
                    .collect()
            })
            .unwrap_or_default();
        Arc::new(Blob {
            bytes,
            source,
            kernels,
        })
    }

    pub fn defines(&self, symbol: &str) -> bool {
        let name = replay::hsaco::kernel_name(symbol);
        self.kernels.iter().any(|k| k == name || k == symbol)
    }
}

/// A kernel object the runtime handed out.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    /// The runtime's symbol name (`_Z6scalePfi.kd`).
    pub symbol: String,
    pub kernarg_size: u32,
    pub blob: Option<Arc<Blob>>,
}

#[derive(Debug, Default)]
pub struct State {
    /// Live allocations by base address.
    pub allocs: BTreeMap<u64, Alloc>,
    /// vmem address reservations (base -> size).
    pub reservations: BTreeMap<u64, u64>,
    /// vmem allocation handles (handle -> size).
    pub handles: HashMap<u64, u64>,
    /// Host pointer of a lock -> the agent address it was given.
    pub locked: HashMap<u64, u64>,
    pub readers: HashMap<u64, Arc<Blob>>,
    /// Deserialised (deprecated API) code objects.
    pub code_objects: HashMap<u64, Arc<Blob>>,
    /// Code objects loaded into each executable, in load order.
    pub executables: HashMap<u64, Vec<Arc<Blob>>>,
    pub kernels: HashMap<u64, KernelInfo>,
    /// Queue address -> its agent.
    pub queues: HashMap<usize, Agent>,
    /// Dispatches per kernel object.
    pub dispatches: HashMap<u64, u64>,
    /// Kernel names in first-dispatch order, with their counts (for the status).
    pub seen: Vec<(String, u64)>,
    pub unnamed_dispatches: u64,
}

impl State {
    pub fn add_alloc(&mut self, base: u64, size: u64, kind: &'static str, handle: u64) {
        if base == 0 || size == 0 {
            return;
        }
        // A new allocation at an address replaces whatever was recorded there (a free the
        // tool did not see, or a remap).
        let end = base.saturating_add(size);
        let stale: Vec<u64> = self
            .allocs
            .range(..end)
            .filter(|(b, a)| b.saturating_add(a.size) > base)
            .map(|(b, _)| *b)
            .collect();
        for b in stale {
            self.allocs.remove(&b);
        }
        self.allocs.insert(
            base,
            Alloc {
                size,
                kind,
                handle,
                access: 0,
            },
        );
    }

    pub fn remove_alloc(&mut self, base: u64) {
        self.allocs.remove(&base);
    }

    /// Remove every allocation of `kind` inside `[base, base + size)`.
    pub fn remove_range(&mut self, base: u64, size: u64, kind: &str) {
        let end = base.saturating_add(size);
        let gone: Vec<u64> = self
            .allocs
            .range(base..end)
            .filter(|(_, a)| a.kind == kind)
            .map(|(b, _)| *b)
            .collect();
        for b in gone {
            self.allocs.remove(&b);
        }
    }

    /// Add access permissions to the vmem mappings overlapping a range.
    pub fn grant(&mut self, base: u64, size: u64, perms: u32) {
        let end = base.saturating_add(size);
        for (b, a) in self.allocs.range_mut(..end) {
            if a.kind == "vmem" && b.saturating_add(a.size) > base {
                a.access |= perms;
            }
        }
    }

    /// Record a kernel object; a blob already known for it is kept.
    pub fn add_kernel(
        &mut self,
        kernel_object: u64,
        symbol: String,
        kernarg_size: u32,
        blob: Option<Arc<Blob>>,
    ) {
        let e = self.kernels.entry(kernel_object).or_insert(KernelInfo {
            symbol: symbol.clone(),
            kernarg_size,
            blob: None,
        });
        e.symbol = symbol;
        if kernarg_size != 0 {
            e.kernarg_size = kernarg_size;
        }
        if blob.is_some() {
            e.blob = blob;
        }
    }

    /// The most recently loaded code object defining `symbol` (when the executable is unknown).
    pub fn blob_defining(&self, symbol: &str) -> Option<Arc<Blob>> {
        let mut found = None;
        for blobs in self.executables.values() {
            for b in blobs {
                if b.defines(symbol) {
                    found = Some(b.clone());
                }
            }
        }
        found
    }

    /// Count a dispatch and return its 0-based index among the kernel object's dispatches.
    pub fn count(&mut self, kernel_object: u64) -> (u64, Option<KernelInfo>) {
        let n = self.dispatches.entry(kernel_object).or_insert(0);
        let index = *n;
        *n += 1;
        let info = self.kernels.get(&kernel_object).cloned();
        match &info {
            Some(k) => match self.seen.iter_mut().find(|(s, _)| *s == k.symbol) {
                Some((_, c)) => *c += 1,
                None => self.seen.push((k.symbol.clone(), 1)),
            },
            None => self.unnamed_dispatches += 1,
        }
        (index, info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_without_a_cap_and_replaced_when_reused() {
        let mut s = State::default();
        for i in 0..10_000u64 {
            s.add_alloc(0x10_0000 + i * 0x1000, 0x1000, "pool", 0);
        }
        assert_eq!(s.allocs.len(), 10_000);
        s.remove_alloc(0x10_0000);
        assert_eq!(s.allocs.len(), 9_999);
        // A mapping over two old allocations replaces both.
        s.add_alloc(0x10_1800, 0x1000, "vmem", 7);
        assert!(!s.allocs.contains_key(&0x10_1000));
        assert!(!s.allocs.contains_key(&0x10_2000));
        assert_eq!(s.allocs[&0x10_1800].handle, 7);
        s.grant(0x10_1800, 0x1000, 3);
        assert_eq!(s.allocs[&0x10_1800].access, 3);
        assert_eq!(
            s.allocs[&0x10_3000].access, 0,
            "pool allocations get no vmem access"
        );
        s.remove_range(0x10_0000, 0x10_0000, "vmem");
        assert!(!s.allocs.contains_key(&0x10_1800));
    }

    #[test]
    fn dispatch_counts_per_kernel_object() {
        let mut s = State::default();
        s.add_kernel(1, "a.kd".into(), 8, None);
        assert_eq!(s.count(1).0, 0);
        assert_eq!(s.count(2).0, 0);
        assert_eq!(s.count(1).0, 1);
        assert_eq!(s.seen, vec![("a.kd".to_string(), 2)]);
        assert_eq!(s.unnamed_dispatches, 1);
    }
}
