//! Updates against a real HTTP server on loopback: a feed, signed builds, a feed that is
//! down or hangs. The key pair is made here, per test; no private key is committed.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use inkstone_api::update::{Installation, UpdateSettings};
use inkstone_api::{Engine, EngineConfig, ErrorCode};
use serde_json::{json, Value};

/// One route's answer; `hang` holds the connection open without answering.
#[derive(Clone)]
struct Route {
    status: u16,
    body: Vec<u8>,
    hang: bool,
}

/// A minimal HTTP/1.1 server: one thread per connection, answers by path, records
/// every path asked for.
struct FeedServer {
    addr: std::net::SocketAddr,
    routes: Arc<Mutex<HashMap<String, Route>>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl FeedServer {
    fn start() -> FeedServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: Arc<Mutex<HashMap<String, Route>>> = Arc::default();
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let (r, a) = (routes.clone(), asked.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (r, a) = (r.clone(), a.clone());
                std::thread::spawn(move || serve(stream, &r, &a));
            }
        });
        FeedServer { addr, routes, asked }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn route(&self, path: &str, status: u16, body: impl Into<Vec<u8>>) {
        self.routes.lock().unwrap().insert(path.to_owned(), Route { status, body: body.into(), hang: false });
    }

    fn hang(&self, path: &str) {
        self.routes.lock().unwrap().insert(path.to_owned(), Route { status: 200, body: Vec::new(), hang: true });
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, routes: &Mutex<HashMap<String, Route>>, asked: &Mutex<Vec<String>>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let text = String::from_utf8_lossy(&head);
    let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
    asked.lock().unwrap().push(path.clone());
    let route = routes.lock().unwrap().get(&path).cloned().unwrap_or(Route { status: 404, body: b"not here".to_vec(), hang: false });
    if route.hang {
        std::thread::sleep(Duration::from_secs(30));
        return;
    }
    let reason = if route.status == 200 { "OK" } else { "Other" };
    let _ = write!(stream, "HTTP/1.1 {} {reason}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", route.status, route.body.len());
    let _ = stream.write_all(&route.body);
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A key pair as `tauri signer generate` makes it: the public key file's text, base64.
struct Signer {
    keys: minisign::KeyPair,
}

impl Signer {
    fn new() -> Signer {
        Signer { keys: minisign::KeyPair::generate_unencrypted_keypair().unwrap() }
    }

    fn public_key_file(&self) -> String {
        b64(&self.keys.pk.to_box().unwrap().to_string())
    }

    /// The feed's `signature`: the `.sig` file's text, base64, with the Tauri CLI's
    /// trusted comment naming `version`.
    fn sign(&self, bytes: &[u8], version: &str) -> String {
        let comment = format!("timestamp:1764000000\tfile:Inkstone_{version}_amd64.AppImage\tversion:{version}");
        let sig = minisign::sign(Some(&self.keys.pk), &self.keys.sk, std::io::Cursor::new(bytes), Some(&comment), None).unwrap();
        b64(&sig.to_string())
    }
}

/// A "new build": a real executable (this system's `echo`), so the installed file can
/// be run.
fn new_build() -> Vec<u8> {
    std::fs::read("/bin/echo").unwrap()
}

fn feed(version: &str, url: &str, signature: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "version": version,
        "notes": "Faster start; the first run offers a sample project.",
        "pub_date": "2026-11-20T09:00:00Z",
        "platforms": {
            format!("{}-appimage", inkstone_api::update::feed::target()): { "url": url, "signature": signature },
            format!("{}-deb", inkstone_api::update::feed::target()): { "url": "https://downloads.invalid/inkstone_0.2.0_amd64.deb", "signature": "unused" }
        }
    }))
    .unwrap()
}

struct Setup {
    engine: Engine,
    appimage: PathBuf,
    _dir: tempfile::TempDir,
}

const OLD: &[u8] = b"\x7fELF the installed 0.1.0 AppImage";

fn setup(feed_url: Option<String>, public_key: String, installation: impl FnOnce(&Path) -> Installation) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let apps = dir.path().join("Applications");
    std::fs::create_dir_all(&apps).unwrap();
    let appimage = apps.join("Inkstone_0.1.0_amd64.AppImage");
    std::fs::write(&appimage, OLD).unwrap();
    std::fs::set_permissions(&appimage, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = EngineConfig::for_tests(dir.path().join("data"));
    config.update = UpdateSettings {
        feed_url,
        public_key,
        current_version: semver::Version::new(0, 1, 0),
        installation: installation(&appimage),
        check_timeout: Duration::from_secs(1),
        download_timeout: Duration::from_secs(30),
    };
    Setup { engine: Engine::open(config).unwrap(), appimage, _dir: dir }
}

fn as_appimage(path: &Path) -> Installation {
    Installation::AppImage { path: path.to_path_buf() }
}

fn folder(path: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn a_newer_appimage_with_a_good_signature_is_put_in_place_verified_and_runs() {
    let server = FeedServer::start();
    let signer = Signer::new();
    let build = new_build();
    server.route("/Inkstone_0.2.0_amd64.AppImage", 200, build.clone());
    server.route("/latest.json", 200, feed("0.2.0", &server.url("/Inkstone_0.2.0_amd64.AppImage"), &signer.sign(&build, "0.2.0")));
    let s = setup(Some(server.url("/latest.json")), signer.public_key_file(), as_appimage);

    let offer = s.engine.call("update.check", json!({})).unwrap();
    assert_eq!(
        offer,
        json!({"type": "available", "currentVersion": "0.1.0", "version": "0.2.0",
               "notes": "Faster start; the first run offers a sample project.", "pubDate": "2026-11-20T09:00:00Z",
               "how": {"type": "install"}})
    );
    assert_eq!(std::fs::read(&s.appimage).unwrap(), OLD, "a check installs nothing");

    let installed = s.engine.call("update.install", json!({"version": "0.2.0"})).unwrap();
    assert_eq!(installed["version"], "0.2.0");
    assert_eq!(installed["restartNeeded"], true);
    assert_eq!(installed["path"], Value::String(s.appimage.display().to_string()));
    assert_eq!(installed["bytes"], build.len());
    // The new binary is in place, verified, executable as the old one was, and nothing
    // else was left beside it.
    let now = std::fs::read(&s.appimage).unwrap();
    assert_eq!(now, build);
    let signature =
        minisign::SignatureBox::from_string(&String::from_utf8(base64::engine::general_purpose::STANDARD.decode(signer.sign(&build, "0.2.0")).unwrap()).unwrap()).unwrap();
    minisign::verify(&signer.keys.pk, &signature, std::io::Cursor::new(&now), true, false, false).unwrap();
    assert_eq!(std::fs::metadata(&s.appimage).unwrap().permissions().mode() & 0o777, 0o755);
    assert_eq!(folder(&s.appimage), vec!["Inkstone_0.1.0_amd64.AppImage"]);
    let ran = std::process::Command::new(&s.appimage).arg("started 0.2.0").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "started 0.2.0\n");
}

#[test]
fn a_bad_signature_another_key_or_a_relabelled_build_is_refused_and_changes_nothing() {
    let server = FeedServer::start();
    let signer = Signer::new();
    let build = new_build();
    server.route("/new.AppImage", 200, build.clone());
    let s = setup(Some(server.url("/latest.json")), signer.public_key_file(), as_appimage);
    let mut tampered = build.clone();
    tampered[100] ^= 1;
    let cases = [
        // Signed, then changed on the way: the signature does not match the file.
        ("update.bad_signature", signer.sign(&tampered, "0.2.0")),
        // Signed with a key this build does not carry.
        ("update.other_key", Signer::new().sign(&build, "0.2.0")),
        // An older signed build announced as 0.2.0.
        ("update.version_mismatch", signer.sign(&build, "0.1.5")),
        // Not a signature at all.
        ("update.bad_signature", b64("hello")),
    ];
    for (problem, signature) in cases {
        server.route("/latest.json", 200, feed("0.2.0", &server.url("/new.AppImage"), &signature));
        let error = s.engine.call("update.install", json!({"version": "0.2.0"})).unwrap_err();
        assert_eq!(error.code, ErrorCode::SignatureInvalid, "{problem}: {error:?}");
        assert_eq!(error.message_id.as_deref(), Some(problem), "{error:?}");
        assert!(error.message.contains("nothing was changed"), "{}", error.message);
        assert_eq!(std::fs::read(&s.appimage).unwrap(), OLD, "{problem}: the AppImage is untouched");
        assert_eq!(folder(&s.appimage), vec!["Inkstone_0.1.0_amd64.AppImage"], "{problem}: no partial file is left");
    }
    assert_eq!(serde_json::to_value(ErrorCode::SignatureInvalid).unwrap(), "SIGNATURE_INVALID");
}

#[test]
fn a_feed_that_is_down_or_hangs_gives_nothing_within_the_timeout() {
    let server = FeedServer::start();
    server.hang("/latest.json");
    // A port nothing listens on: bound, then let go.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    // A feed URL may carry a distributor's token: it never reaches the error.
    for (url, code) in [(format!("http://{closed}/latest.json?key=s3cret-feed-token"), ErrorCode::Offline), (server.url("/latest.json"), ErrorCode::Timeout)] {
        let s = setup(Some(url.clone()), Signer::new().public_key_file(), as_appimage);
        let started = Instant::now();
        let error = s.engine.call("update.check", json!({})).unwrap_err();
        let took = started.elapsed();
        assert_eq!(error.code, code, "{url}: {error:?}");
        assert!(!error.message.contains("s3cret"), "{}", error.message);
        assert!(took < Duration::from_millis(1500), "{url}: the check took {took:?} with a 1 s timeout");
        assert_eq!(std::fs::read(&s.appimage).unwrap(), OLD);
    }
    let s = setup(Some(server.url("/missing.json")), String::new(), as_appimage);
    let error = s.engine.call("update.check", json!({})).unwrap_err();
    assert_eq!((error.code, error.message_id.as_deref()), (ErrorCode::Offline, Some("update.status")));
    server.route("/page.html", 200, "<html>a captive portal</html>");
    let s = setup(Some(server.url("/page.html")), String::new(), as_appimage);
    let error = s.engine.call("update.check", json!({})).unwrap_err();
    assert_eq!((error.code, error.message_id.as_deref()), (ErrorCode::ProviderBadResponse, Some("update.bad_feed")));
}

#[test]
fn an_older_or_equal_version_offers_nothing_and_off_contacts_nothing() {
    let server = FeedServer::start();
    let signer = Signer::new();
    for (version, latest) in [("0.1.0", "0.1.0"), ("v0.0.9", "0.0.9")] {
        server.route("/latest.json", 200, feed(version, &server.url("/x.AppImage"), &signer.sign(b"x", version)));
        let s = setup(Some(server.url("/latest.json")), signer.public_key_file(), as_appimage);
        assert_eq!(s.engine.call("update.check", json!({})).unwrap(), json!({"type": "upToDate", "currentVersion": "0.1.0", "latestVersion": latest}));
        let error = s.engine.call("update.install", json!({"version": "0.1.0"})).unwrap_err();
        assert_eq!((error.code, error.message_id.as_deref()), (ErrorCode::Conflict, Some("update.offer_changed")));
        assert_eq!(std::fs::read(&s.appimage).unwrap(), OLD);
    }
    // A dynamic server's "nothing new".
    server.route("/dynamic", 204, Vec::new());
    let s = setup(Some(server.url("/dynamic")), signer.public_key_file(), as_appimage);
    assert_eq!(s.engine.call("update.check", json!({})).unwrap()["type"], "upToDate");
    assert!(!server.asked().iter().any(|p| p.ends_with(".AppImage")), "nothing was downloaded: {:?}", server.asked());

    let before = server.asked().len();
    let off = setup(None, signer.public_key_file(), as_appimage);
    assert_eq!(off.engine.call("update.check", json!({})).unwrap(), json!({"type": "off"}));
    let error = off.engine.call("update.install", json!({"version": "0.2.0"})).unwrap_err();
    assert_eq!(error.message_id.as_deref(), Some("update.off"));
    assert_eq!(server.asked().len(), before);
    // The tests' own engines never have a feed: nothing reaches the internet.
    let dir = tempfile::tempdir().unwrap();
    assert!(EngineConfig::for_tests(dir.path()).update.feed_url.is_none());
}

#[test]
fn a_deb_or_rpm_installation_is_told_where_the_new_version_is_and_installs_nothing() {
    let server = FeedServer::start();
    let signer = Signer::new();
    let build = new_build();
    server.route("/new.AppImage", 200, build.clone());
    server.route("/latest.json", 200, feed("0.2.0", &server.url("/new.AppImage"), &signer.sign(&build, "0.2.0")));
    let s = setup(Some(server.url("/latest.json")), signer.public_key_file(), |_| Installation::Deb);
    let offer = s.engine.call("update.check", json!({})).unwrap();
    assert_eq!(offer["how"], json!({"type": "packageManager", "package": "deb", "url": "https://downloads.invalid/inkstone_0.2.0_amd64.deb"}));
    let error = s.engine.call("update.install", json!({"version": "0.2.0"})).unwrap_err();
    assert_eq!((error.code, error.message_id.as_deref()), (ErrorCode::Validation, Some("update.not_appimage")));
    let rpm = setup(Some(server.url("/latest.json")), signer.public_key_file(), |_| Installation::Rpm);
    // No rpm entry in this feed: the platform's plain entry is named instead.
    assert_eq!(rpm.engine.call("update.check", json!({})).unwrap()["how"]["package"], "rpm");
    assert!(!server.asked().iter().any(|p| p.ends_with(".AppImage")), "nothing was downloaded: {:?}", server.asked());
    assert_eq!(std::fs::read(&s.appimage).unwrap(), OLD);

    // An AppImage built without a key says where to download, and refuses to install.
    let keyless = setup(Some(server.url("/latest.json")), "# no key yet\n".to_owned(), as_appimage);
    assert_eq!(keyless.engine.call("update.check", json!({})).unwrap()["how"]["type"], "download");
    let error = keyless.engine.call("update.install", json!({"version": "0.2.0"})).unwrap_err();
    assert_eq!((error.code, error.message_id.as_deref()), (ErrorCode::SignatureInvalid, Some("update.no_key")));
    assert_eq!(std::fs::read(&keyless.appimage).unwrap(), OLD);
}

/// Inkstone's AppImage runtime as `cargo build` left it beside this test's binary
/// (`target/debug/inkstone-appimage-runtime`; `cargo build --workspace` and
/// `cargo test --workspace` build it).
fn appimage_runtime() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let runtime = exe.parent().and_then(Path::parent).unwrap().join("inkstone-appimage-runtime");
    assert!(runtime.is_file(), "{} is missing: cargo build -p inkstone-appimage-runtime", runtime.display());
    runtime
}

/// A real AppImage as scripts/package makes one: the runtime with `AI\x02` at offset 8,
/// then a squashfs image (mksquashfs, gzip) whose AppRun runs the image's
/// `usr/bin/inkstone-cli --version`, which says `version`.
fn real_appimage(dir: &Path, version: &str) -> Vec<u8> {
    let appdir = dir.join(format!("AppDir-{version}"));
    std::fs::create_dir_all(appdir.join("usr/bin")).unwrap();
    let write = |path: &str, text: String| {
        std::fs::write(appdir.join(path), text).unwrap();
        std::fs::set_permissions(appdir.join(path), std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    write("AppRun", "#!/bin/sh\nexec \"$APPDIR/usr/bin/inkstone-cli\" \"$@\"\n".to_owned());
    write("usr/bin/inkstone-cli", format!("#!/bin/sh\necho \"inkstone-cli {version} $*\"\n"));
    let image = dir.join(format!("image-{version}.squashfs"));
    let made = std::process::Command::new("mksquashfs")
        .arg(&appdir)
        .arg(&image)
        .args(["-comp", "gzip", "-all-root", "-noappend", "-no-progress", "-quiet"])
        .status()
        .expect("mksquashfs (apt-get install squashfs-tools)");
    assert!(made.success());
    let mut bytes = std::fs::read(appimage_runtime()).unwrap();
    bytes[8..11].copy_from_slice(b"AI\x02");
    bytes.extend(std::fs::read(&image).unwrap());
    bytes
}

/// Runs the AppImage at `path` the way a system without FUSE does; what it printed, and
/// what its runtime left in its TMPDIR.
fn run_appimage(path: &Path, tmp: &Path) -> (String, Vec<String>) {
    std::fs::create_dir_all(tmp).unwrap();
    let out = std::process::Command::new(path).args(["--appimage-extract-and-run", "--version"]).env("TMPDIR", tmp).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let left = std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), left)
}

#[test]
fn a_real_appimage_is_replaced_by_a_newer_signed_one_that_then_runs_and_a_bad_signature_changes_nothing() {
    let server = FeedServer::start();
    let signer = Signer::new();
    let s = setup(Some(server.url("/latest.json")), signer.public_key_file(), as_appimage);
    let work = tempfile::tempdir().unwrap();
    let old = real_appimage(work.path(), "0.1.0");
    let new = real_appimage(work.path(), "0.2.0");
    std::fs::write(&s.appimage, &old).unwrap();
    let tmp = work.path().join("tmp");
    assert_eq!(run_appimage(&s.appimage, &tmp), ("inkstone-cli 0.1.0 --version\n".to_owned(), vec![]));
    server.route("/Inkstone_0.2.0_amd64.AppImage", 200, new.clone());

    // Signed by another key, or changed after signing: refused, the AppImage untouched.
    let mut tampered = new.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    for (problem, signature) in [("update.other_key", Signer::new().sign(&new, "0.2.0")), ("update.bad_signature", signer.sign(&tampered, "0.2.0"))] {
        server.route("/latest.json", 200, feed("0.2.0", &server.url("/Inkstone_0.2.0_amd64.AppImage"), &signature));
        let error = s.engine.call("update.install", json!({"version": "0.2.0"})).unwrap_err();
        assert_eq!((error.code, error.message_id.as_deref()), (ErrorCode::SignatureInvalid, Some(problem)), "{error:?}");
        assert_eq!(std::fs::read(&s.appimage).unwrap(), old, "{problem}: the AppImage is untouched");
        assert_eq!(folder(&s.appimage), vec!["Inkstone_0.1.0_amd64.AppImage"]);
        assert_eq!(run_appimage(&s.appimage, &tmp).0, "inkstone-cli 0.1.0 --version\n");
    }

    // Signed with the built-in key: the file is replaced and the new version runs from it.
    server.route("/latest.json", 200, feed("0.2.0", &server.url("/Inkstone_0.2.0_amd64.AppImage"), &signer.sign(&new, "0.2.0")));
    let installed = s.engine.call("update.install", json!({"version": "0.2.0"})).unwrap();
    assert_eq!((installed["version"].as_str(), installed["bytes"].as_u64()), (Some("0.2.0"), Some(new.len() as u64)));
    assert_eq!(std::fs::read(&s.appimage).unwrap(), new);
    assert_eq!(std::fs::metadata(&s.appimage).unwrap().permissions().mode() & 0o777, 0o755);
    assert_eq!(folder(&s.appimage), vec!["Inkstone_0.1.0_amd64.AppImage"]);
    assert_eq!(run_appimage(&s.appimage, &tmp), ("inkstone-cli 0.2.0 --version\n".to_owned(), vec![]), "the new version runs and cleans up");
}
