//! A throwaway PostgreSQL cluster for the tests and the benchmark: `initdb` in a
//! temporary folder, `postgres` on a free loopback port, trust auth for the
//! `postgres` user. Run as root (initdb refuses root), it runs as the `postgres` system
//! user through `runuser`.
//!
//! The server runs under a small shell that waits on a pipe from this process: when
//! this process ends, however it ends, the pipe closes and the shell stops the server
//! and removes the folder, so nothing outlives the test run.
//!
//! The binaries are found through `INKSTONE_PG_BIN` (a folder), `initdb` on `PATH`, or
//! Debian's `/usr/lib/postgresql/<version>/bin` (the `postgresql` package).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A running throwaway cluster.
pub struct TempCluster {
    pub port: u16,
    root: PathBuf,
    server: Child,
}

/// The folder of `initdb`, `postgres`, or why there is none.
pub fn bin_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("INKSTONE_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let initdb = dir.join("initdb");
            if initdb.is_file() {
                let real = std::fs::canonicalize(&initdb).unwrap_or(initdb);
                return Ok(real.parent().map(Path::to_path_buf).unwrap_or(dir));
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
                    let bin = e.path().join("bin");
                    bin.join("initdb").is_file().then_some((version, bin))
                })
                .collect()
        })
        .unwrap_or_default();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "PostgreSQL is not installed: no initdb on PATH or in /usr/lib/postgresql/*/bin (install Debian's `postgresql` package; scripts/test does)".to_owned())
}

fn effective_uid_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| status.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0")))
        .unwrap_or(false)
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// `program args…`, as the `postgres` user when this process is root.
fn command(as_postgres: bool, program: &Path) -> Command {
    if as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

impl TempCluster {
    /// Starts a cluster. `fsync` off makes tests faster; the benchmark keeps it on.
    pub fn start(fsync: bool) -> Result<TempCluster, String> {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let bin = bin_dir()?;
        let as_postgres = effective_uid_is_root();
        // The `postgres` user must reach the folder: as root, /tmp rather than a TMPDIR
        // that may be root's own.
        let parent = if as_postgres { PathBuf::from("/tmp") } else { std::env::temp_dir() };
        let root = parent.join(format!("inkstone-pg-{}-{}", std::process::id(), COUNT.fetch_add(1, Ordering::SeqCst)));
        let data = root.join("data");
        std::fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        if as_postgres {
            let status = Command::new("chown").args(["-R", "postgres:"]).arg(&root).status().map_err(|e| format!("chown: {e}"))?;
            if !status.success() {
                return Err("cannot hand the cluster folder to the `postgres` user (is there one? the Debian package creates it)".into());
            }
        }
        let output = command(as_postgres, &bin.join("initdb"))
            .args(["-D"])
            .arg(&data)
            .args(["-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync"])
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        if !output.status.success() {
            let _ = std::fs::remove_dir_all(&root);
            return Err(format!("initdb failed: {}", String::from_utf8_lossy(&output.stderr)));
        }
        let port = free_port()?;
        let log = std::fs::File::create(root.join("server.log")).map_err(|e| e.to_string())?;
        // The shell stops the server and removes the folder when its stdin closes.
        let script = r#"bin="$1"; data="$2"; port="$3"; root="$4"; fsync="$5"
"$bin/postgres" -D "$data" -p "$port" -h 127.0.0.1 -k "$root" -c fsync="$fsync" -c max_connections=400 -c shared_buffers=64MB &
pid=$!
cat >/dev/null
kill -INT "$pid" 2>/dev/null
wait "$pid"
rm -rf "$root""#;
        let server = command(as_postgres, Path::new("/bin/sh"))
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(&bin)
            .arg(&data)
            .arg(port.to_string())
            .arg(&root)
            .arg(if fsync { "on" } else { "off" })
            .stdin(Stdio::piped())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start postgres: {e}"))?;
        let cluster = TempCluster { port, root: root.clone(), server };
        let started = Instant::now();
        loop {
            match postgres::Client::connect(&cluster.url("postgres"), postgres::NoTls) {
                Ok(_) => return Ok(cluster),
                Err(e) if started.elapsed() > Duration::from_secs(30) => {
                    let log = std::fs::read_to_string(root.join("server.log")).unwrap_or_default();
                    return Err(format!("postgres did not accept connections within 30 s: {e}\n{log}"));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// The URL of `database` on this cluster.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// A new empty database; returns its URL.
    pub fn create_database(&self, name: &str) -> Result<String, String> {
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls).map_err(|e| e.to_string())?;
        client.batch_execute(&format!("CREATE DATABASE \"{name}\"")).map_err(|e| format!("cannot create database {name}: {e}"))?;
        Ok(self.url(name))
    }

    /// The folder of the cluster (removed when it stops).
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for TempCluster {
    fn drop(&mut self) {
        // Closing stdin tells the shell to stop the server and remove the folder.
        if let Some(mut stdin) = self.server.stdin.take() {
            let _ = stdin.flush();
        }
        let _ = self.server.wait();
    }
}
