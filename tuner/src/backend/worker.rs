//! One thread that owns a GPU session (the `bench` and `replay` backends): GPU runtimes hand out
//! handles that are neither `Send` nor safe to use from several threads (a CUDA context is
//! current per thread), while the search prepares slots from parallel threads. Every call is
//! sent to this thread as a closure and runs there, one at a time, in order.

use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;

type Job<S> = Box<dyn FnOnce(&mut S) + Send>;

/// The owner thread of a state `S` built on it.
pub struct Worker<S> {
    tx: Mutex<Option<Sender<Job<S>>>>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

/// The worker thread is gone (its state panicked): one line for the user.
pub const GONE: &str = "the GPU session's thread stopped unexpectedly";

/// The error for any call after the session's device timed out or failed (`why`): the device
/// is never touched again.
pub fn broken(why: &str) -> crate::error::Error {
    crate::error::Error::Environment(format!("the GPU cannot be used any more: {why}"))
}

impl<S: 'static> Worker<S> {
    /// Start the thread and build the state on it with `init`; `init`'s error comes back here
    /// (and no thread is left running).
    pub fn start<E: Send + 'static>(
        name: &str,
        init: impl FnOnce() -> Result<S, E> + Send + 'static,
    ) -> Result<Worker<S>, E> {
        let (tx, rx) = channel::<Job<S>>();
        let (ready_tx, ready_rx) = channel::<Result<(), E>>();
        let handle = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let mut state = match init() {
                    Ok(s) => {
                        let _ = ready_tx.send(Ok(()));
                        s
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                while let Ok(job) = rx.recv() {
                    job(&mut state);
                }
            })
            .expect("cannot start a thread");
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Worker {
                tx: Mutex::new(Some(tx)),
                handle: Mutex::new(Some(handle)),
            }),
            Ok(Err(e)) => {
                let _ = handle.join();
                Err(e)
            }
            Err(_) => {
                // init panicked: propagate it here.
                match handle.join() {
                    Err(p) => std::panic::resume_unwind(p),
                    Ok(()) => unreachable!("the thread reports before it ends"),
                }
            }
        }
    }

    /// Run `f` on the state, on the worker thread, and wait for its result. `None` when the
    /// thread is gone (an earlier call panicked).
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut S) -> R + Send + 'static,
    ) -> Option<R> {
        let (rtx, rrx) = channel();
        {
            let tx = self.tx.lock().unwrap_or_else(|p| p.into_inner());
            let tx = tx.as_ref()?;
            tx.send(Box::new(move |s: &mut S| {
                let _ = rtx.send(f(s));
            }))
            .ok()?;
        }
        rrx.recv().ok()
    }
}

impl<S> Drop for Worker<S> {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop; its state is dropped there.
        drop(self.tx.lock().unwrap_or_else(|p| p.into_inner()).take());
        if let Some(h) = self.handle.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_run_in_order_on_one_thread() {
        let w =
            Worker::start("t", || Ok::<_, String>(Vec::<std::thread::ThreadId>::new())).unwrap();
        let here = std::thread::current().id();
        for _ in 0..3 {
            w.call(|v| v.push(std::thread::current().id())).unwrap();
        }
        let ids = w.call(|v| v.clone()).unwrap();
        assert_eq!(ids.len(), 3);
        assert!(ids.iter().all(|&i| i == ids[0] && i != here));
        let e = Worker::<u8>::start("t", || Err("no GPU".to_string())).err();
        assert_eq!(e.as_deref(), Some("no GPU"));
    }
}
