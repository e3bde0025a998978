//! HTTP to the update feed and its downloads. The third module that imports reqwest
//! (besides `llm::transport` and `sync::transport`): the feed needs no model profile's
//! proxy or key and no sync headers, but its own limits: a short deadline for the feed
//! (a feed that is down must slow nothing), a long one for the download, both answers
//! read to a bound. It fetches and reports; it decides nothing.

use std::time::Duration;

/// The feed's answer is small; anything longer is not a feed.
pub const MAX_FEED_BYTES: usize = 1024 * 1024;
/// The largest artifact accepted (an AppImage carries GTK and WebKit: ~100 MB).
pub const MAX_ARTIFACT_BYTES: u64 = 1024 * 1024 * 1024;

/// Why a fetch gave nothing usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No answer: refused, reset, unknown host.
    Unreachable(String),
    /// No complete answer within the deadline.
    TimedOut(Duration),
    /// An answer with an error status.
    Status(u16),
    /// Longer than allowed.
    TooLarge(u64),
    /// The answer could not be written where it goes.
    Write(String),
}

/// What a feed request got: `None` for 204 No Content (a dynamic server's "no update").
pub type FeedAnswer = Option<Vec<u8>>;

/// The error and its causes, without the URL: a distributor's feed URL may carry a
/// token in its query, and this text reaches the API's error message.
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

fn client_and_runtime(connect: Duration) -> Result<(reqwest::Client, tokio::runtime::Runtime), Failure> {
    let client =
        reqwest::Client::builder().connect_timeout(connect).user_agent(concat!("Inkstone/", env!("CARGO_PKG_VERSION"))).build().map_err(|e| Failure::Unreachable(describe(e)))?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| Failure::Unreachable(e.to_string()))?;
    Ok((client, runtime))
}

/// GETs the feed; the whole exchange (connect, answer, body) ends within `deadline`.
pub fn feed(url: &str, deadline: Duration) -> Result<FeedAnswer, Failure> {
    let (client, runtime) = client_and_runtime(deadline)?;
    runtime.block_on(async {
        let exchange = async {
            let mut response = client.get(url).header("accept", "application/json").send().await.map_err(|e| Failure::Unreachable(describe(e)))?;
            let status = response.status().as_u16();
            if status == 204 {
                return Ok(None);
            }
            if !(200..300).contains(&status) {
                return Err(Failure::Status(status));
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| Failure::Unreachable(describe(e)))? {
                if body.len() + chunk.len() > MAX_FEED_BYTES {
                    return Err(Failure::TooLarge(MAX_FEED_BYTES as u64));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Some(body))
        };
        tokio::time::timeout(deadline, exchange).await.unwrap_or(Err(Failure::TimedOut(deadline)))
    })
}

/// GETs an artifact, handing each piece to `sink` as it arrives (to hash and write it
/// without holding it whole). Connecting may take `connect`; the whole download
/// `deadline`.
pub fn download(url: &str, connect: Duration, deadline: Duration, sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> Result<u64, Failure> {
    let (client, runtime) = client_and_runtime(connect)?;
    runtime.block_on(async {
        let exchange = async {
            let mut response = client.get(url).send().await.map_err(|e| Failure::Unreachable(describe(e)))?;
            let status = response.status().as_u16();
            if !(200..300).contains(&status) {
                return Err(Failure::Status(status));
            }
            if let Some(length) = response.content_length().filter(|n| *n > MAX_ARTIFACT_BYTES) {
                return Err(Failure::TooLarge(length));
            }
            let mut total = 0u64;
            while let Some(chunk) = response.chunk().await.map_err(|e| Failure::Unreachable(describe(e)))? {
                total += chunk.len() as u64;
                if total > MAX_ARTIFACT_BYTES {
                    return Err(Failure::TooLarge(total));
                }
                sink(&chunk).map_err(|e| Failure::Write(e.to_string()))?;
            }
            Ok(total)
        };
        tokio::time::timeout(deadline, exchange).await.unwrap_or(Err(Failure::TimedOut(deadline)))
    })
}
