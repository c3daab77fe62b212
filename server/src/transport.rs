//! The stdio transport: `lsp-server`'s `Message` types and writer, with a reader that survives
//! what a real editor sends. `lsp_server::Connection::stdio` ends the whole connection at the
//! first message that is not UTF-8 (Neovim's JSON encoder passes a buffer's invalid bytes
//! through as they are); this reader takes the frame (`Content-Length` header, then exactly
//! that many bytes), decodes a body that is not UTF-8 with U+FFFD replacements, and reports a
//! body that is not a JSON-RPC message on the `malformed` channel instead of stopping.

use crossbeam_channel::{Receiver, Sender};
use lsp_server::Message;
use std::io::{self, BufRead, Write};
use std::thread::JoinHandle;

/// Largest message body accepted (a 50k-line buffer is a few MB; a larger frame is skipped
/// without being held in memory).
pub const MAX_BODY: usize = 256 << 20;

/// What the reader could not take as a message: one line for the client's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

/// The transport's threads: joined when the session ends.
pub struct IoThreads {
    reader: JoinHandle<()>,
    writer: JoinHandle<io::Result<()>>,
}

impl IoThreads {
    /// Wait (at most `limit`) for the writer to send what the session queued: it ends once
    /// every sender is gone (workers still answering a request hold one). The reader is left
    /// blocked on stdin when the client keeps it open; the process ends anyway.
    pub fn flush(self, limit: std::time::Duration) -> io::Result<()> {
        drop(self.reader);
        let deadline = std::time::Instant::now() + limit;
        while !self.writer.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if !self.writer.is_finished() {
            return Ok(());
        }
        self.writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("writer thread panicked")))
    }
}

/// The channels of a session over stdin/stdout: (to the client, from the client, malformed
/// input), and the threads.
pub fn stdio() -> (
    Sender<Message>,
    Receiver<Message>,
    Receiver<Malformed>,
    IoThreads,
) {
    let (to_client, outgoing) = crossbeam_channel::unbounded::<Message>();
    let writer = std::thread::Builder::new()
        .name("hip-unroll-lsp-writer".into())
        .spawn(move || {
            let stdout = io::stdout();
            let mut out = stdout.lock();
            for msg in outgoing {
                msg.write(&mut out)?;
            }
            out.flush()
        })
        .expect("spawn the writer thread");
    let (incoming, from_client) = crossbeam_channel::unbounded::<Message>();
    let (bad, malformed) = crossbeam_channel::unbounded::<Malformed>();
    let reader = std::thread::Builder::new()
        .name("hip-unroll-lsp-reader".into())
        .spawn(move || {
            let stdin = io::stdin();
            let mut input = stdin.lock();
            read_loop(&mut input, &incoming, &bad);
        })
        .expect("spawn the reader thread");
    (
        to_client,
        from_client,
        malformed,
        IoThreads { reader, writer },
    )
}

/// Read messages until end of input, an I/O error, or `exit`.
pub fn read_loop(input: &mut impl BufRead, incoming: &Sender<Message>, bad: &Sender<Malformed>) {
    loop {
        match read_message(input) {
            Ok(None) => return,
            Ok(Some(Ok(msg))) => {
                let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
                if incoming.send(msg).is_err() || exit {
                    return;
                }
            }
            Ok(Some(Err(m))) => {
                if bad.send(m).is_err() {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

/// One frame: `None` at end of input; a message, or why its body is not one. An I/O error or a
/// frame without a usable `Content-Length` (nothing after it can be trusted) is an error.
pub fn read_message(input: &mut impl BufRead) -> io::Result<Option<Result<Message, Malformed>>> {
    let mut size: Option<usize> = None;
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return if first {
                Ok(None)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "end of input inside a header",
                ))
            };
        }
        first = false;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        if let Some((name, value)) = text.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                size = value.trim().parse().ok();
            }
        }
    }
    let Some(size) = size else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a message without Content-Length",
        ));
    };
    if size > MAX_BODY {
        io::copy(
            &mut io::Read::take(&mut *input, size as u64),
            &mut io::sink(),
        )?;
        return Ok(Some(Err(Malformed(format!(
            "a message of {size} bytes was skipped (more than {MAX_BODY})"
        )))));
    }
    let mut body = vec![0u8; size];
    input.read_exact(&mut body)?;
    let text = match String::from_utf8(body) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Ok(Some(serde_json::from_str::<Message>(&text).map_err(|e| {
        Malformed(format!("a message that is not JSON-RPC was ignored: {e}"))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut v = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn invalid_utf8_and_garbage_do_not_end_the_stream() {
        let mut input = Vec::new();
        input.extend(frame(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"t\":\"a\xffb\"}}",
        ));
        input.extend(frame(b"not json"));
        input.extend(frame(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}",
        ));
        let mut r = io::Cursor::new(input);
        let Some(Ok(Message::Notification(n))) = read_message(&mut r).unwrap() else {
            panic!("a notification")
        };
        assert_eq!(n.params["t"], "a\u{fffd}b");
        assert!(matches!(read_message(&mut r).unwrap(), Some(Err(_))));
        assert!(matches!(
            read_message(&mut r).unwrap(),
            Some(Ok(Message::Request(_)))
        ));
        assert!(read_message(&mut r).unwrap().is_none());
    }

    #[test]
    fn a_frame_without_length_is_an_error() {
        let mut r = io::Cursor::new(b"X-Other: 1\r\n\r\n{}".to_vec());
        assert!(read_message(&mut r).is_err());
    }
}
