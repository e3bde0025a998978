//! `inkstone-cli update check` through the real binary against a feed on loopback:
//! off, a newer version and how to get it, up to date, a feed that is down. It needs
//! no data folder, so it works while the app holds one.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Output;

use serde_json::json;

/// Serves `body` to every request, on loopback, from a thread.
fn serve(body: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let _ = write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
            let _ = stream.write_all(&body);
        }
    });
    format!("http://{addr}/latest.json")
}

fn update_check(feed: &str, json: bool) -> Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_inkstone-cli"));
    if json {
        command.arg("--json");
    }
    // A data folder that does not exist: the check never opens one.
    command.args(["--data-dir", "/nonexistent/inkstone", "update", "check"]).env("INKSTONE_UPDATE_FEED", feed).env("INKSTONE_LOG", "off").output().unwrap()
}

fn text(output: &Output) -> String {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn update_check_prints_what_the_feed_offers_or_that_updates_are_off() {
    assert_eq!(text(&update_check("", false)), "Updates are off: this build has no update feed (INKSTONE_UPDATE_FEED names one).\n");
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&update_check("", true).stdout).unwrap(), json!({"type": "off"}));

    let version = env!("CARGO_PKG_VERSION");
    let target = format!("{}-{}", if std::env::consts::OS == "macos" { "darwin" } else { std::env::consts::OS }, std::env::consts::ARCH);
    let newer = serve(
        serde_json::to_vec(&json!({
            "version": "99.0.0", "notes": "A faster start.", "pub_date": "2026-11-20T09:00:00Z",
            "platforms": { target.clone(): { "url": "https://downloads.invalid/Inkstone_99.0.0_amd64.AppImage", "signature": "c2ln" } }
        }))
        .unwrap(),
    );
    assert_eq!(
        text(&update_check(&newer, false)),
        format!("Inkstone 99.0.0 is available (this is {version}), published 2026-11-20T09:00:00Z.\n\nA faster start.\n\nDownload it from https://downloads.invalid/Inkstone_99.0.0_amd64.AppImage.\n")
    );
    let same = serve(serde_json::to_vec(&json!({ "version": version, "platforms": {} })).unwrap());
    assert_eq!(text(&update_check(&same, false)), format!("Inkstone {version} is up to date (the feed's newest is {version}).\n"));

    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let down = update_check(&format!("http://{closed}/latest.json"), false);
    assert_eq!(down.status.code(), Some(1));
    let error: serde_json::Value = serde_json::from_slice(&down.stderr).unwrap();
    assert_eq!((error["code"].as_str(), error["messageId"].as_str()), (Some("OFFLINE"), Some("update.unreachable")));
}
