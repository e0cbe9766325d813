//! One call over the gateway's REST surface (`POST /v1/calls`), with the standard library only:
//! HTTP/1.1 on a plain TCP connection (`Connection: close`), for a gateway on loopback or behind a
//! TLS-terminating proxy. Any other HTTP client works as well with the types of this crate.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::{CallRequest, CallResult};

#[derive(Debug)]
pub enum CallFailure {
    /// The connection could not be made or broke.
    Io(std::io::Error),
    /// The answer was not an HTTP response with a CallResult body.
    Answer(String),
}

impl From<std::io::Error> for CallFailure {
    fn from(error: std::io::Error) -> Self {
        CallFailure::Io(error)
    }
}

/// POST `request` to `http://{host_port}/v1/calls` (with a bearer `token` if given): the
/// envelope the gateway answered, whatever its HTTP status (refusals are envelopes too). It asks for
/// envelope version 2 (`Colonnade-Envelope-Version: 2`), the shape `CallResult` describes.
pub fn call(host_port: &str, token: Option<&str>, request: &CallRequest) -> Result<CallResult, CallFailure> {
    let body = serde_json::to_vec(request).map_err(|e| CallFailure::Answer(e.to_string()))?;
    let mut stream = TcpStream::connect(host_port)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    let head = format!(
        "POST /v1/calls HTTP/1.1\r\nHost: {host_port}\r\nContent-Type: application/json\r\n\
         Colonnade-Envelope-Version: 2\r\nContent-Length: {}\r\n{auth}Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(&body)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let text = String::from_utf8_lossy(&answer);
    let (headers, payload) =
        text.split_once("\r\n\r\n").ok_or_else(|| CallFailure::Answer("no HTTP header end".into()))?;
    if headers.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        return serde_json::from_str(&unchunk(payload)).map_err(|e| CallFailure::Answer(e.to_string()));
    }
    serde_json::from_str(payload).map_err(|e| CallFailure::Answer(e.to_string()))
}

fn unchunk(payload: &str) -> String {
    let mut out = String::new();
    let mut rest = payload;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let length = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if length == 0 || tail.len() < length {
            break;
        }
        out.push_str(&tail[..length]);
        rest = tail[length..].trim_start_matches("\r\n");
    }
    out
}
