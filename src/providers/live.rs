//! The live transport: sends provider requests over HTTP(S) with reqwest (rustls) and streams the
//! response body as a [`super::transport::BodyStream`].
//!
//! It knows nothing of any provider's format and never logs requests (they carry the key).

use std::time::Duration;

use async_trait::async_trait;
use futures::TryStreamExt;

use super::transport::{HttpRequest, HttpResponse, Transport, TransportError};

/// Settings of the live HTTP client.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTransportConfig {
    /// Time allowed to open the TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Time allowed from sending the request to the response headers. The body is then governed
    /// by the providers' stream idle timeout, not by this.
    pub response_timeout: Duration,
    /// Honour `HTTP(S)_PROXY` / `NO_PROXY` from the environment (as Pi does).
    pub use_system_proxy: bool,
}

impl Default for LiveTransportConfig {
    fn default() -> Self {
        LiveTransportConfig {
            connect_timeout: Duration::from_secs(30),
            response_timeout: Duration::from_secs(600),
            use_system_proxy: true,
        }
    }
}

/// A [`Transport`] that talks to the real network.
#[derive(Debug, Clone)]
pub struct LiveTransport {
    client: reqwest::Client,
    config: LiveTransportConfig,
}

/// The HTTP client could not be built (TLS backend initialisation).
#[derive(Debug, thiserror::Error)]
#[error("failed to build the HTTP client: {0}")]
pub struct LiveTransportError(String);

impl LiveTransport {
    /// A live transport with default settings.
    pub fn new() -> Result<Self, LiveTransportError> {
        Self::with_config(LiveTransportConfig::default())
    }

    /// A live transport with explicit settings.
    pub fn with_config(config: LiveTransportConfig) -> Result<Self, LiveTransportError> {
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .connect_timeout(config.connect_timeout);
        if !config.use_system_proxy {
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| LiveTransportError(e.to_string()))?;
        Ok(LiveTransport { client, config })
    }
}

/// The error text with its sources, so "error sending request" says why.
fn describe(err: &dyn std::error::Error) -> String {
    let mut s = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        s.push_str(": ");
        s.push_str(&e.to_string());
        source = e.source();
    }
    s
}

#[async_trait]
impl Transport for LiveTransport {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let method = reqwest::Method::from_bytes(request.method.as_bytes()).map_err(|e| {
            TransportError::Connect {
                url: request.url.clone(),
                message: format!("bad method {}: {e}", request.method),
            }
        })?;
        let body = serde_json::to_vec(&request.body).map_err(|e| TransportError::Connect {
            url: request.url.clone(),
            message: format!("failed to serialise the body: {e}"),
        })?;
        let mut builder = self.client.request(method, &request.url).body(body);
        for (k, v) in &request.headers {
            builder = builder.header(k, v);
        }
        let response = tokio::time::timeout(self.config.response_timeout, builder.send())
            .await
            .map_err(|_| TransportError::Connect {
                url: request.url.clone(),
                message: format!("no response within {:?}", self.config.response_timeout),
            })?
            .map_err(|e| TransportError::Connect {
                url: request.url.clone(),
                message: describe(&e),
            })?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = response
            .bytes_stream()
            .map_err(|e| TransportError::Body(describe(&e)));
        Ok(HttpResponse {
            status,
            headers,
            body: Box::pin(body),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_closed_port_is_a_connect_error() {
        // Bind then drop a listener to get a port nobody listens on.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let t = LiveTransport::with_config(LiveTransportConfig {
            use_system_proxy: false,
            ..Default::default()
        })
        .unwrap();
        let err = t
            .send(HttpRequest {
                method: "POST".into(),
                url: format!("http://127.0.0.1:{port}/v1/messages"),
                headers: vec![],
                body: serde_json::json!({}),
            })
            .await
            .err()
            .expect("no server");
        assert!(matches!(err, TransportError::Connect { .. }), "{err:?}");
    }
}
