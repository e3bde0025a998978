//! Inkstone's AppImage runtime: the ELF program at the start of an AppImage of type 2.
//!
//! An AppImage is this program with a squashfs image appended right after the ELF's end
//! (the end of its section header table), and the bytes `AI\x02` at offset 8 of the ELF
//! header (written by `scripts/package`). Started, it finds the image in its own file and
//! runs the `AppRun` at the image's root with the arguments it was given:
//!
//! - mounted read-only with `squashfuse` under `$TMPDIR/.mount_<name><random>` when
//!   squashfuse is installed and FUSE works (unmounted when AppRun exits);
//! - otherwise, and with `--appimage-extract-and-run` or `APPIMAGE_EXTRACT_AND_RUN=1`,
//!   extracted into such a folder, which is removed when AppRun exits.
//!
//! AppRun gets `APPIMAGE` (this file, the one an update replaces), `APPDIR` (the mounted
//! or extracted folder), `ARGV0` (how the AppImage was called) and `OWD` (the working
//! folder it was called from), as the AppImage project's runtime sets them. SIGINT,
//! SIGTERM, SIGHUP and SIGQUIT are passed on to AppRun; its exit code is this program's.
//!
//! Written for Inkstone rather than taken from the AppImage project because that runtime
//! is downloaded from GitHub by the bundler, which this build may not reach; the image
//! is read with `backhand` (squashfs in Rust), so nothing but the optional squashfuse is
//! needed on the host.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant, SystemTime};

use backhand::{FilesystemReader, InnerNode};

const VERSION: &str = env!("CARGO_PKG_VERSION");

const HELP: &str = "\
Inkstone's AppImage runtime. Without an --appimage- option, runs the app with the given
arguments (mounted with squashfuse when FUSE works, else extracted to a temporary folder).

  --appimage-extract [PATH]   extract the image (or only PATH in it) into ./squashfs-root
  --appimage-extract-and-run  extract to a temporary folder, run the app there, remove it
  --appimage-mount            mount the image, print where, wait until interrupted
  --appimage-offset           print where the squashfs image starts in this file
  --appimage-version          print this runtime's version
  --appimage-help             this text

APPIMAGE_EXTRACT_AND_RUN=1 in the environment is the same as --appimage-extract-and-run.
";

fn main() {
    std::process::exit(run());
}

/// Everything the modes need to know about this AppImage.
struct Image {
    /// This file.
    path: PathBuf,
    /// Where the squashfs image starts in it.
    offset: u64,
    /// How the AppImage was called.
    argv0: OsString,
}

fn run() -> i32 {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    let argv0 = if args.is_empty() { OsString::new() } else { args.remove(0) };
    let path = match fs::read_link("/proc/self/exe").or_else(|_| std::env::current_exe()) {
        Ok(path) => path,
        Err(e) => return fail(&format!("cannot find this program's file: {e}")),
    };
    let first = args.first().map(|a| a.to_string_lossy().into_owned());
    match first.as_deref() {
        Some("--appimage-help") => {
            print!("{HELP}");
            return 0;
        }
        Some("--appimage-version") => {
            println!("inkstone-appimage-runtime {VERSION}");
            return 0;
        }
        _ => {}
    }
    let offset = match image_offset(&path) {
        Ok(offset) => offset,
        Err(e) => return fail(&format!("{} is not an AppImage: {e}", path.display())),
    };
    let image = Image { path, offset, argv0 };
    match first.as_deref() {
        Some("--appimage-offset") => {
            println!("{offset}");
            0
        }
        Some("--appimage-extract") => {
            let only = args.get(1).map(PathBuf::from);
            match extract(&image, Path::new("squashfs-root"), only.as_deref(), true) {
                Ok(()) => 0,
                Err(e) => fail(&format!("extracting: {e}")),
            }
        }
        Some("--appimage-extract-and-run") => guarded(|| extract_and_run(&image, &args[1..])),
        Some("--appimage-mount") => mount_and_wait(&image),
        Some(other) if other.starts_with("--appimage-") => fail(&format!("unknown option {other}; see --appimage-help")),
        _ if std::env::var_os("APPIMAGE_EXTRACT_AND_RUN").is_some_and(|v| v == "1") => guarded(|| extract_and_run(&image, &args)),
        _ => guarded(|| match mount_and_run(&image, &args) {
            Some(code) => code,
            None => extract_and_run(&image, &args),
        }),
    }
}

fn fail(message: &str) -> i32 {
    eprintln!("inkstone-appimage-runtime: {message}");
    1
}

// ---------------------------------------------------------------------------------------
// Where the image starts.

/// The end of the ELF program at the start of `path` (the end of its section header
/// table, as the AppImage runtime computes it), where the squashfs image must start.
fn image_offset(path: &Path) -> io::Result<u64> {
    let mut file = File::open(path)?;
    let mut header = [0u8; 64];
    file.read_exact(&mut header)?;
    let offset = elf_end(&header).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no ELF header"))?;
    let mut magic = [0u8; 4];
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(&mut magic).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "nothing after the ELF program"))?;
    if &magic != b"hsqs" {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("no squashfs image at offset {offset}")));
    }
    Ok(offset)
}

/// `e_shoff + e_shentsize * e_shnum` of a little-endian ELF header (32 or 64 bit).
fn elf_end(header: &[u8; 64]) -> Option<u64> {
    if &header[..4] != b"\x7fELF" || header[5] != 1 {
        return None;
    }
    let u16_at = |at: usize| u64::from(u16::from_le_bytes([header[at], header[at + 1]]));
    let (shoff, shentsize, shnum) = match header[4] {
        1 => (u64::from(u32::from_le_bytes(header[0x20..0x24].try_into().ok()?)), u16_at(0x2E), u16_at(0x30)),
        2 => (u64::from_le_bytes(header[0x28..0x30].try_into().ok()?), u16_at(0x3A), u16_at(0x3C)),
        _ => return None,
    };
    shoff.checked_add(shentsize.checked_mul(shnum)?)
}

// ---------------------------------------------------------------------------------------
// Extracting.

/// Writes the image's files under `into` (or only `only` and what is under it), with
/// their permissions and modification times; symlinks as symlinks.
fn extract(image: &Image, into: &Path, only: Option<&Path>, verbose: bool) -> io::Result<()> {
    let file = BufReader::new(File::open(&image.path)?);
    let fs = FilesystemReader::from_reader_with_offset(file, image.offset).map_err(|e| io::Error::other(e.to_string()))?;
    let only = only.map(|p| p.components().filter(|c| matches!(c, Component::Normal(_))).collect::<PathBuf>());
    fs::create_dir_all(into)?;
    let mut dirs: Vec<(PathBuf, u32, u32)> = Vec::new();
    for node in fs.files() {
        // Paths in the image are absolute ("/usr/bin/…"); anything but plain names is refused.
        if node.fullpath.components().any(|c| matches!(c, Component::ParentDir | Component::Prefix(_))) {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("unsafe path in the image: {}", node.fullpath.display())));
        }
        let relative: PathBuf = node.fullpath.components().filter(|c| matches!(c, Component::Normal(_))).collect();
        if let Some(only) = &only {
            if !relative.starts_with(only) && !only.starts_with(&relative) {
                continue;
            }
        }
        let target = into.join(&relative);
        let mode = u32::from(node.header.permissions) & 0o7777;
        match &node.inner {
            InnerNode::Dir(_) => {
                fs::create_dir_all(&target)?;
                dirs.push((target, mode, node.header.mtime));
                continue;
            }
            InnerNode::File(entry) => {
                if only.as_ref().is_some_and(|o| !relative.starts_with(o)) {
                    continue;
                }
                remove_existing(&target)?;
                let mut out = BufWriter::new(File::create(&target)?);
                io::copy(&mut fs.file(entry).reader(), &mut out)?;
                let out = out.into_inner().map_err(|e| e.into_error())?;
                out.set_permissions(fs::Permissions::from_mode(mode))?;
                out.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(node.header.mtime.into()))?;
            }
            InnerNode::Symlink(link) => {
                if only.as_ref().is_some_and(|o| !relative.starts_with(o)) {
                    continue;
                }
                remove_existing(&target)?;
                symlink(&link.link, &target)?;
            }
            // Devices, pipes and sockets have no place in an application's image.
            _ => continue,
        }
        if verbose {
            println!("{}", Path::new("squashfs-root").join(&relative).display());
        }
    }
    // Directory modes last (a read-only folder could not be filled), deepest first.
    for (dir, mode, mtime) in dirs.iter().rev() {
        fs::set_permissions(dir, fs::Permissions::from_mode(*mode))?;
        if let Ok(handle) = File::open(dir) {
            let _ = handle.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs((*mtime).into()));
        }
    }
    Ok(())
}

fn remove_existing(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(_) => Ok(()),
    }
}

fn extract_and_run(image: &Image, args: &[OsString]) -> i32 {
    forward_signals();
    let dir = match temporary_folder(image) {
        Ok(dir) => dir,
        Err(e) => return fail(&format!("cannot make a temporary folder: {e}")),
    };
    let code = match extract(image, &dir, None, false) {
        Err(e) => fail(&format!("extracting into {}: {e}", dir.display())),
        Ok(()) if signalled() => 128 + TERMINATED.load(Ordering::SeqCst),
        Ok(()) => run_app_run(image, &dir, args),
    };
    remove_folder(&dir);
    code
}

/// `$TMPDIR/.mount_<first 6 characters of the file's name><random>`, made private: the
/// place the AppImage project's runtime mounts at, which Tauri checks `APPDIR` against.
fn temporary_folder(image: &Image) -> io::Result<PathBuf> {
    let name: String = image.path.file_name().map(|n| n.to_string_lossy().chars().filter(|c| c.is_ascii_alphanumeric()).take(6).collect()).unwrap_or_default();
    let template = std::env::temp_dir().join(format!(".mount_{name}XXXXXX"));
    let mut bytes = template.as_os_str().as_bytes().to_vec();
    bytes.push(0);
    // SAFETY: `bytes` is a NUL-terminated, writable template that mkdtemp fills in place.
    let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(io::Error::last_os_error());
    }
    bytes.pop();
    Ok(PathBuf::from(OsStr::from_bytes(&bytes)))
}

/// Removes an extracted folder, read-only folders in it included.
fn remove_folder(dir: &Path) {
    fn writable(dir: &Path) {
        let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
        if let Ok(entries) = fs::read_dir(dir) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    writable(&entry.path());
                }
            }
        }
    }
    writable(dir);
    if let Err(e) = fs::remove_dir_all(dir) {
        eprintln!("inkstone-appimage-runtime: could not remove {}: {e}", dir.display());
    }
}

// ---------------------------------------------------------------------------------------
// Mounting with squashfuse.

/// A mounted image: squashfuse in the foreground, its mount point.
struct Mount {
    squashfuse: Child,
    dir: PathBuf,
}

impl Mount {
    /// `None` when squashfuse is missing or cannot mount here (no FUSE, no fusermount3
    /// for a user, a container without /dev/fuse); the caller extracts instead.
    fn new(image: &Image) -> Option<Mount> {
        let squashfuse = find_in_path("squashfuse")?;
        if !Path::new("/dev/fuse").exists() {
            return None;
        }
        let dir = temporary_folder(image).ok()?;
        let spawned = Command::new(squashfuse)
            .arg("-f")
            .arg("-o")
            .arg(format!("ro,offset={}", image.offset))
            .arg(&image.path)
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else {
            let _ = fs::remove_dir(&dir);
            return None;
        };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if fs::symlink_metadata(dir.join("AppRun")).is_ok() {
                return Some(Mount { squashfuse: child, dir });
            }
            if !matches!(child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        let _ = fs::remove_dir(&dir);
        None
    }
}

impl Drop for Mount {
    /// squashfuse unmounts when it is asked to stop; the empty mount point is removed.
    fn drop(&mut self) {
        // SAFETY: plain kill(2) on the child's pid.
        unsafe { libc::kill(self.squashfuse.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.squashfuse.wait();
        if fs::remove_dir(&self.dir).is_err() {
            // Still mounted (busy): detach it, then remove the folder.
            let path = [self.dir.as_os_str().as_bytes(), b"\0"].concat();
            // SAFETY: a NUL-terminated path.
            unsafe { libc::umount2(path.as_ptr().cast(), libc::MNT_DETACH) };
            for tool in ["fusermount3", "fusermount"] {
                if let Some(tool) = find_in_path(tool) {
                    let _ = Command::new(tool).arg("-u").arg("-z").arg(&self.dir).stderr(Stdio::null()).status();
                    break;
                }
            }
            let _ = fs::remove_dir(&self.dir);
        }
    }
}

/// Runs AppRun from the mounted image; `None` when the image could not be mounted.
fn mount_and_run(image: &Image, args: &[OsString]) -> Option<i32> {
    forward_signals();
    let mount = Mount::new(image)?;
    let code = if signalled() { 128 + TERMINATED.load(Ordering::SeqCst) } else { run_app_run(image, &mount.dir, args) };
    drop(mount);
    Some(code)
}

fn mount_and_wait(image: &Image) -> i32 {
    forward_signals();
    let Some(mut mount) = Mount::new(image) else {
        return fail("cannot mount the image: squashfuse is not installed or FUSE does not work here (try --appimage-extract)");
    };
    println!("{}", mount.dir.display());
    // Until interrupted: the signal handler stops squashfuse, which unmounts.
    CHILD.store(mount.squashfuse.id() as i32, Ordering::SeqCst);
    let _ = mount.squashfuse.wait();
    CHILD.store(0, Ordering::SeqCst);
    0
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| fs::metadata(candidate).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

// ---------------------------------------------------------------------------------------
// Running AppRun, passing signals on.

/// Runs `work` (extract or mount, run AppRun, clean up) in a child process and exits
/// with its code, passing signals on to it. The child is told (PR_SET_PDEATHSIG) when
/// this process dies, so even a SIGKILL of the AppImage's process (what WebKitWebDriver
/// does at the end of a session) stops the app and removes its folder: the child passes
/// the SIGTERM on to AppRun and cleans up once it has exited.
fn guarded(work: impl FnOnce() -> i32) -> i32 {
    // SAFETY: getpid and fork; the runtime has started no thread, so the child may run
    // ordinary code.
    let parent = unsafe { libc::getpid() };
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return work();
    }
    if pid == 0 {
        forward_signals();
        // SAFETY: prctl and getppid on this process.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
        if unsafe { libc::getppid() } != parent {
            TERMINATED.store(libc::SIGTERM, Ordering::SeqCst);
        }
        let code = work();
        let _ = io::Write::flush(&mut io::stdout());
        // SAFETY: ends the child without running the parent's atexit handlers twice.
        unsafe { libc::_exit(code) };
    }
    CHILD.store(pid, Ordering::SeqCst);
    forward_signals();
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waits for our own child.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited == pid {
            break;
        }
        if waited < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return fail("lost the runtime's child process");
        }
    }
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}

/// The pid of the process signals are passed on to (0: none yet).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// The signal that came while there was no process to pass it to (0: none).
static TERMINATED: AtomicI32 = AtomicI32::new(0);

extern "C" fn pass_on(signal: libc::c_int) {
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(child, signal) };
    } else {
        TERMINATED.store(signal, Ordering::SeqCst);
    }
}

fn signalled() -> bool {
    TERMINATED.load(Ordering::SeqCst) != 0
}

/// Catches the signals that end a program, so the temporary folder or mount is cleaned
/// up: passed on to AppRun while it runs, remembered before.
fn forward_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: installs a handler that only does async-signal-safe work (atomics, kill).
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = pass_on as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

fn run_app_run(image: &Image, appdir: &Path, args: &[OsString]) -> i32 {
    let app_run = appdir.join("AppRun");
    let mut command = Command::new(&app_run);
    command.args(args).env("APPIMAGE", &image.path).env("APPDIR", appdir).env("ARGV0", &image.argv0);
    if let Ok(cwd) = std::env::current_dir() {
        command.env("OWD", cwd);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return fail(&format!("cannot start {}: {e}", app_run.display())),
    };
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    // A signal that came between spawning and storing the pid is passed on now.
    let early = TERMINATED.swap(0, Ordering::SeqCst);
    if early != 0 {
        // SAFETY: kill(2) on our child's pid.
        unsafe { libc::kill(child.id() as libc::pid_t, early) };
    }
    let status = child.wait();
    CHILD.store(0, Ordering::SeqCst);
    match status {
        Ok(status) => exit_code(status),
        Err(e) => fail(&format!("waiting for AppRun: {e}")),
    }
}

fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_elf_end_is_the_end_of_the_section_header_table() {
        let mut header = [0u8; 64];
        header[..4].copy_from_slice(b"\x7fELF");
        header[4] = 2;
        header[5] = 1;
        header[0x28..0x30].copy_from_slice(&1000u64.to_le_bytes());
        header[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        header[0x3C..0x3E].copy_from_slice(&10u16.to_le_bytes());
        assert_eq!(elf_end(&header), Some(1640));
        header[0] = b'M';
        assert_eq!(elf_end(&header), None);
    }

    #[test]
    fn this_test_binary_has_an_elf_end_inside_its_file() {
        let exe = std::env::current_exe().unwrap();
        let mut header = [0u8; 64];
        File::open(&exe).unwrap().read_exact(&mut header).unwrap();
        let end = elf_end(&header).unwrap();
        assert_eq!(end, fs::metadata(&exe).unwrap().len(), "a plain ELF ends with its section headers");
        assert!(image_offset(&exe).is_err(), "a plain ELF carries no image");
    }
}
