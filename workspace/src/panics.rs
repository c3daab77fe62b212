//! Panics caught on analysis threads, with where they happened: one process-wide hook that, on
//! a thread inside [`catch`], records the location instead of printing (the caller reports the
//! panic itself); everywhere else the previous hook runs. Used by `check`'s workers and the
//! language server's.

use std::cell::{Cell, RefCell};
use std::panic::AssertUnwindSafe;

/// A panic caught by [`catch`].
#[derive(Debug, Clone)]
pub struct Caught {
    /// The panic's message (`"unknown panic"` when its payload is not a string).
    pub message: String,
    /// `file:line:column` of the panic, when the hook saw it.
    pub at: Option<String>,
}

thread_local! {
    /// Whether this thread is inside [`catch`] (the hook records instead of printing).
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// Where the last panic inside [`catch`] on this thread happened.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn install_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                let loc = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                LAST.with(|l| *l.borrow_mut() = loc);
            } else {
                default(info);
            }
        }));
    });
}

/// `f()`, its panic caught with its message and location.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Caught> {
    install_hook();
    let outer = CATCHING.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(outer));
    result.map_err(|payload| Caught {
        message: payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into()),
        at: LAST.with(|l| l.borrow_mut().take()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_has_its_message_and_location() {
        let e = catch(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert_eq!(e.message, "boom 7");
        assert!(
            e.at.as_deref().is_some_and(|a| a.contains("panics.rs:")),
            "{e:?}"
        );
        assert_eq!(catch(|| 5).unwrap(), 5);
    }
}
