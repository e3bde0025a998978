//! `inkstone-fake-model`: the scripted OpenAI-compatible TEST server, standalone, for
//! the end-to-end tests and for trying Inkstone without a real provider. It is not a
//! model: every chat answers a fixed text (or the script given with `--script FILE`,
//! a JSON list of replies, then the fixed text). Tests can also append replies while
//! it runs (`POST /_test/script`) and read the chat requests (`GET /_test/requests`).
//!
//! With `--llama-ctx N` it poses as llama.cpp's server started with `-c N`: `/props`
//! says `n_ctx` N and a request over it is refused with llama.cpp's overflow error
//! (`ModelServer::pose_as_llama_cpp`).
//!
//! Usage: inkstone-fake-model [--addr 127.0.0.1:PORT] [--key KEY] [--script FILE] [--llama-ctx N]
//! Prints `listening on http://ADDR/v1` and serves until killed. With `--key`, requests
//! without `Bearer KEY` get a 401.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use inkstone_test_support::model_server::{reply_from_json, ModelServer, Reply};
use serde_json::Value;

fn main() {
    let mut addr = "127.0.0.1:0".to_owned();
    let mut key = None;
    let mut llama_ctx: Option<u64> = None;
    let mut script = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => addr = args.next().expect("--addr needs a value"),
            "--key" => key = args.next(),
            "--llama-ctx" => llama_ctx = Some(args.next().and_then(|n| n.parse().ok()).expect("--llama-ctx needs a number of tokens")),
            "--script" => {
                let path = args.next().expect("--script needs a file");
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
                let values: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
                script = values.iter().map(|v| reply_from_json(v).unwrap_or_else(|e| panic!("{path}: {e}"))).collect();
            }
            "--help" | "-h" => {
                println!("inkstone-fake-model [--addr 127.0.0.1:PORT] [--key KEY] [--script FILE] [--llama-ctx N]\nA scripted OpenAI-compatible TEST server; never a model.");
                return;
            }
            other => panic!("unknown argument {other}; see --help"),
        }
    }
    let server = ModelServer::start_on(&addr, script).unwrap_or_else(|e| panic!("cannot listen on {addr}: {e}"));
    server.set_fallback(Reply::text("这是测试服务器的固定回复。This is the fake model server's fixed reply."));
    server.require_key(key.as_deref());
    if let Some(n_ctx) = llama_ctx {
        server.pose_as_llama_cpp(n_ctx);
    }
    println!("listening on {}", server.base_url());
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
