//! The HTTP transport seam under every provider.
//!
//! A provider builds an [`HttpRequest`] (method, URL, headers, JSON body) and gets back an
//! [`HttpResponse`] whose body is a byte stream. The live transport sends it with reqwest; the
//! cassette recorder wraps another transport and writes what passes; the cassette player answers
//! from a file. Providers never know which one they talk to.

use std::pin::Pin;

use async_trait::async_trait;
use bytes::Bytes;
use futures::Stream;
use serde_json::Value;

/// One request to a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub method: String,
    /// The full URL (base URL plus path and query).
    pub url: String,
    /// Header names in lower case. Includes the auth header: recorders must drop it.
    pub headers: Vec<(String, String)>,
    /// The JSON body, key order as built.
    pub body: Value,
}

impl HttpRequest {
    /// The path and query of the URL (`/v1/messages`), what cassettes record and compare; a
    /// query parameter that holds a credential (a gateway's `?key=`) reads `[REDACTED]`
    /// ([`crate::sandbox::secrets::masked_url`]).
    pub fn path(&self) -> String {
        let after_scheme = self
            .url
            .split_once("://")
            .map_or(self.url.as_str(), |(_, r)| r);
        let path = after_scheme
            .find(['/', '?'])
            .map_or("/", |i| &after_scheme[i..]);
        crate::sandbox::secrets::masked_url(path)
    }
}

/// A chunk stream of a response body. An `Err` item means the connection broke mid-body.
pub type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, TransportError>> + Send>>;

/// A response: status, headers (lower-case names) and the body as a stream of chunks.
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: BodyStream,
}

impl HttpResponse {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a transport could not produce a response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransportError {
    /// Could not connect or send.
    #[error("failed to connect to {url}: {message}")]
    Connect { url: String, message: String },
    /// The body stream broke after the response started.
    #[error("connection broke while reading the response: {0}")]
    Body(String),
    /// A cassette could not serve the request (diverged, exhausted, unreadable).
    #[error("{0}")]
    Cassette(String),
    /// The recording's client stopped reading the reply here: the user interrupted it (Pi's
    /// Escape), so the body ends without its closing event, on purpose.
    #[error("{0}")]
    Interrupted(String),
}

/// Sends requests. Implemented by the live client and by the cassette recorder and player.
#[async_trait]
pub trait Transport: Send + Sync {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError>;
}
