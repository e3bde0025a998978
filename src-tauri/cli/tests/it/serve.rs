use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// `inkstone-cli serve --port 0` on a data dir, stopped on drop.
pub struct Server {
    child: Child,
    pub base: String,
    pub token: String,
    pub port: u16,
}

impl Server {
    pub fn start(data_dir: &Path) -> Server {
        let ui = tempfile::tempdir().unwrap().keep();
        std::fs::write(ui.join("index.html"), "<!doctype html><title>Inkstone test UI</title>").unwrap();
        let mut child = crate::cli(data_dir).args(["serve", "--port", "0", "--ui-dir", ui.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut url = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(found) = line.strip_prefix("INKSTONE_URL=") {
                url = Some(found.to_owned());
                break;
            }
        }
        // Keep draining stdout so the server never writes into a closed pipe.
        std::thread::spawn(move || for _ in lines {});
        let url = url.expect("serve printed its URL");
        let (base, token) = url.split_once("/#token=").unwrap();
        let port = base.rsplit(':').next().unwrap().parse().unwrap();
        Server { child, base: base.to_owned(), token: token.to_owned(), port }
    }

    pub fn stop(&mut self) {
        // SIGTERM, so the server closes the store cleanly.
        let _ = std::process::Command::new("kill").arg(self.child.id().to_string()).status();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder().timeout(Duration::from_secs(20)).build().unwrap()
}

#[test]
fn the_api_over_http_with_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let http = client();
    let call = |method: &str, params: Value| http.post(format!("{}/api/{method}", server.base)).bearer_auth(&server.token).json(&params).send().unwrap();
    let created = call("project.create", json!({"title": "网页里建的"}));
    assert_eq!(created.status(), 200);
    let created: Value = created.json().unwrap();
    let listed: Value = call("project.list", json!({})).json().unwrap();
    assert_eq!(listed["projects"][0]["id"], created["id"]);
    let missing = call("project.get", json!({"projectId": "prj_nope"}));
    assert_eq!(missing.status(), 404);
    assert_eq!(missing.json::<Value>().unwrap()["code"], "NOT_FOUND");
    let invalid = call("project.create", json!({"title": 7}));
    assert_eq!(invalid.status(), 400);
    assert_eq!(invalid.json::<Value>().unwrap()["details"]["field"], "title");
    let stale = call("project.update", json!({"projectId": created["id"], "baseRevision": 99, "source": "x"}));
    assert_eq!(stale.status(), 409);
    // The UI is served, with index.html as the fallback for client-side routes.
    let page = http.get(format!("{}/some/route", server.base)).send().unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().unwrap().contains("Inkstone test UI"));
}

#[test]
fn streams_arrive_as_server_sent_events() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let http = client();
    http.post(format!("{}/api/project.create", server.base)).bearer_auth(&server.token).json(&json!({"title": "x"})).send().unwrap();
    let body = http
        .post(format!("{}/api/stream/export.run", server.base))
        .bearer_auth(&server.token)
        .json(&json!({"path": dir.path().join("out").display().to_string()}))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let events: Vec<&str> = body.lines().filter_map(|l| l.strip_prefix("event: ")).collect();
    assert_eq!(events.first(), Some(&"progress"), "{body}");
    assert_eq!(events.last(), Some(&"result"), "{body}");
    let failing = http.post(format!("{}/api/stream/import.markdown", server.base)).bearer_auth(&server.token).json(&json!({"path": "/nope"})).send().unwrap().text().unwrap();
    assert!(failing.contains("event: error") && failing.contains("VALIDATION"), "{failing}");
}

/// `sync.watch` over SSE: the status at once, a change pushed on the same open stream
/// with no other request, and a shutdown that ends the stream (with its `result`)
/// instead of waiting for ever on it.
#[test]
fn sync_status_is_pushed_on_one_open_stream_and_shutdown_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let http = client();
    let watch = http.post(format!("{}/api/stream/sync.watch", server.base)).bearer_auth(&server.token).json(&json!({})).send().unwrap();
    assert_eq!(watch.status(), 200);
    let mut lines = BufReader::new(watch).lines();
    let mut next = |name: &str| -> Value {
        let mut event = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(found) = line.strip_prefix("event: ") {
                event = found.to_owned();
            } else if let Some(data) = line.strip_prefix("data: ") {
                assert_eq!(event, name, "{data}");
                return serde_json::from_str(data).unwrap();
            }
        }
        panic!("the stream ended before a `{name}` event");
    };
    let first = next("syncStatus");
    assert_eq!((first["connected"].as_bool(), first["localOnlyVersions"].as_u64()), (Some(false), Some(0)));
    let call =
        |method: &str, params: Value| -> Value { http.post(format!("{}/api/{method}", server.base)).bearer_auth(&server.token).json(&params).send().unwrap().json().unwrap() };
    let project = call("project.create", json!({"title": "推", "source": "一"}));
    call("version.create", json!({"projectId": project["id"]}));
    // Creating the project is a local change of its own (`localChanges` moves), so its
    // status may be pushed before the version's.
    let mut pushed = next("syncStatus");
    for _ in 0..4 {
        if pushed["localOnlyVersions"] == 1 {
            break;
        }
        assert!(pushed["localChanges"].as_u64() > first["localChanges"].as_u64(), "a push without a change: {pushed}");
        pushed = next("syncStatus");
    }
    assert_eq!(pushed["localOnlyVersions"], 1, "the new version's status is pushed");
    server.stop();
    assert_eq!(next("result")["localOnlyVersions"], 1, "shutdown ends the watch with its last status");
}

#[test]
fn requests_without_the_right_token_host_or_origin_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let http = client();
    let url = format!("{}/api/project.list", server.base);
    assert_eq!(http.post(&url).json(&json!({})).send().unwrap().status(), 401, "no token");
    assert_eq!(http.post(&url).bearer_auth("0".repeat(64)).json(&json!({})).send().unwrap().status(), 401, "wrong token");
    let foreign_host = http.post(&url).bearer_auth(&server.token).header("Host", format!("evil.example:{}", server.port)).json(&json!({})).send().unwrap();
    assert_eq!(foreign_host.status(), 403, "DNS rebinding: a foreign Host");
    let foreign_origin = http.post(&url).bearer_auth(&server.token).header("Origin", "http://evil.example").json(&json!({})).send().unwrap();
    assert_eq!(foreign_origin.status(), 403, "a foreign Origin");
    let same_origin = http.post(&url).bearer_auth(&server.token).header("Origin", format!("http://localhost:{}", server.port)).json(&json!({})).send().unwrap();
    assert_eq!(same_origin.status(), 200);
    let page = http.get(format!("{}/", server.base)).header("Host", "attacker.test").send().unwrap();
    assert_eq!(page.status(), 403, "static files need the right Host too");
    // Nothing was created by the refused requests.
    let listed: Value = http.post(&url).bearer_auth(&server.token).json(&json!({})).send().unwrap().json().unwrap();
    assert_eq!(listed["projects"], json!([]));
}

#[test]
fn serve_binds_loopback_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    assert!(server.base.starts_with("http://127.0.0.1:"));
    // No listener on the wildcard address for this port from another interface name.
    let listeners = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let port_hex = format!(":{:04X}", server.port);
    let on_port: Vec<&str> = listeners.lines().filter(|l| l.split_whitespace().nth(1).is_some_and(|local| local.ends_with(&port_hex))).collect();
    assert!(!on_port.is_empty(), "the server listens");
    for line in on_port {
        let local = line.split_whitespace().nth(1).unwrap();
        assert!(local.starts_with("0100007F:"), "listening on {local}, not 127.0.0.1");
    }
}

/// The desktop window's policy, from the repository's `tauri.conf.json`.
fn desktop_csp() -> String {
    let config: Value = serde_json::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tauri.conf.json")).unwrap()).unwrap();
    config["app"]["security"]["csp"].as_str().unwrap().to_owned()
}

#[test]
fn every_response_carries_the_desktop_windows_content_security_policy() {
    // Browser mode once sent no Content-Security-Policy.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let http = client();
    let csp = desktop_csp();
    // The UI in a browser talks to this server: the policy must let it.
    assert!(csp.split(';').any(|d| d.trim().starts_with("connect-src") && d.contains("'self'")), "{csp}");
    assert!(csp.split(';').any(|d| d.trim().starts_with("img-src") && !d.contains("https:") && !d.contains('*')), "no remote images: {csp}");
    let responses = [
        ("index", http.get(format!("{}/", server.base)).send().unwrap()),
        ("a client-side route", http.get(format!("{}/some/route", server.base)).send().unwrap()),
        ("an API call", http.post(format!("{}/api/project.list", server.base)).bearer_auth(&server.token).json(&json!({})).send().unwrap()),
        ("a refused API call", http.post(format!("{}/api/project.list", server.base)).json(&json!({})).send().unwrap()),
    ];
    for (what, response) in responses {
        let header = response.headers().get("content-security-policy").map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(header.as_deref(), Some(csp.as_str()), "{what}");
    }
}

#[test]
fn media_needs_the_token_too() {
    // `/media/*` once answered without the token.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let http = client();
    let call =
        |method: &str, params: Value| -> Value { http.post(format!("{}/api/{method}", server.base)).bearer_auth(&server.token).json(&params).send().unwrap().json().unwrap() };
    let project = call("project.create", json!({"title": "图"}));
    let asset = call("media.addBytes", json!({"projectId": project["id"], "fileName": "dot.png", "dataBase64": inkstone_test_support::tiny_png_base64()}));
    let url = format!("{}/media/{}", server.base, asset["fileName"].as_str().unwrap());
    let refused = http.get(&url).send().unwrap();
    assert_eq!(refused.status(), 401, "no token");
    let error: Value = refused.json().unwrap();
    assert_eq!(error["code"], "PERMISSION_DENIED");
    assert!(!error["hints"].as_array().unwrap().is_empty(), "{error}");
    assert_eq!(http.get(&url).bearer_auth("0".repeat(64)).send().unwrap().status(), 401, "wrong token");
    assert_eq!(http.get(format!("{}/media/", server.base)).send().unwrap().status(), 401, "the folder");
    assert_eq!(http.get(format!("{}/media", server.base)).send().unwrap().status(), 401, "the folder without its slash");
    let allowed = http.get(&url).bearer_auth(&server.token).send().unwrap();
    assert_eq!(allowed.status(), 200);
    assert!(allowed.bytes().unwrap().starts_with(b"\x89PNG"));
}
