//! The runtime as an AppImage: this crate's binary with a squashfs image made by
//! `mksquashfs` (squashfs-tools, which scripts/lib.sh installs) appended, run as a
//! person runs an AppImage.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RUNTIME: &str = env!("CARGO_BIN_EXE_inkstone-appimage-runtime");

/// An AppImage whose AppRun prints what it was given and exits 7, in `dir`.
fn appimage(dir: &Path, app_run: &str) -> PathBuf {
    let appdir = dir.join("AppDir");
    std::fs::create_dir_all(appdir.join("usr/bin")).unwrap();
    std::fs::write(appdir.join("AppRun"), app_run).unwrap();
    std::fs::set_permissions(appdir.join("AppRun"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(appdir.join("usr/bin/tool"), "#!/bin/sh\necho tool\n").unwrap();
    std::fs::set_permissions(appdir.join("usr/bin/tool"), std::fs::Permissions::from_mode(0o751)).unwrap();
    std::os::unix::fs::symlink("usr/bin/tool", appdir.join("tool")).unwrap();
    let image = dir.join("image.squashfs");
    let made = Command::new("mksquashfs")
        .arg(&appdir)
        .arg(&image)
        .args(["-comp", "gzip", "-all-root", "-noappend", "-no-progress", "-quiet", "-all-time", "1000", "-mkfs-time", "1000"])
        .status()
        .expect("mksquashfs (apt-get install squashfs-tools)");
    assert!(made.success());
    let path = dir.join("Test_1.0_amd64.AppImage");
    let mut bytes = std::fs::read(RUNTIME).unwrap();
    bytes.extend(std::fs::read(&image).unwrap());
    std::fs::write(&path, bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const PRINTS: &str = "#!/bin/sh\necho \"APPIMAGE=$APPIMAGE\"\necho \"APPDIR=$APPDIR\"\necho \"ARGV0=$ARGV0\"\necho \"ARGS=$*\"\n\"$APPDIR/tool\"\nexit 7\n";

fn run(appimage: &Path, tmp: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(appimage).args(args).env("TMPDIR", tmp).envs(env.iter().copied()).output().unwrap()
}

fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn extract_and_run_runs_app_run_with_the_arguments_and_its_exit_code_then_removes_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let path = appimage(dir.path(), PRINTS);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    for (args, env) in [(&["--appimage-extract-and-run", "a b", "--flag"][..], &[][..]), (&["a b", "--flag"][..], &[("APPIMAGE_EXTRACT_AND_RUN", "1")][..])] {
        let out = run(&path, &tmp, args, env);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(7), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains(&format!("APPIMAGE={}\n", path.display())), "{stdout}");
        assert!(stdout.contains(&format!("APPDIR={}/.mount_Test10", tmp.display())), "{stdout}");
        assert!(stdout.contains(&format!("ARGV0={}\n", path.display())), "{stdout}");
        assert!(stdout.contains("ARGS=a b --flag\ntool\n"), "{stdout}");
        assert_eq!(leftovers(&tmp), Vec::<String>::new(), "the extracted folder is removed");
    }
}

#[test]
fn extract_writes_squashfs_root_with_modes_and_symlinks_and_offset_is_the_runtime_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = appimage(dir.path(), PRINTS);
    let out = Command::new(&path).arg("--appimage-extract").current_dir(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let root = dir.path().join("squashfs-root");
    assert_eq!(std::fs::read_to_string(root.join("AppRun")).unwrap(), PRINTS);
    assert_eq!(std::fs::metadata(root.join("usr/bin/tool")).unwrap().permissions().mode() & 0o7777, 0o751);
    assert_eq!(std::fs::read_link(root.join("tool")).unwrap(), Path::new("usr/bin/tool"));
    let offset = Command::new(&path).arg("--appimage-offset").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&offset.stdout).trim(), std::fs::metadata(RUNTIME).unwrap().len().to_string());
    let version = Command::new(&path).arg("--appimage-version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("inkstone-appimage-runtime {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn a_plain_run_mounts_or_falls_back_to_extracting_and_cleans_up_either_way() {
    let dir = tempfile::tempdir().unwrap();
    let path = appimage(dir.path(), "#!/bin/sh\ngrep -c \" $APPDIR \" /proc/mounts\nexit 3\n");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = run(&path, &tmp, &[], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let mounted = String::from_utf8_lossy(&out.stdout).trim() == "1";
    // Where squashfuse is installed and FUSE works, the image was mounted.
    let fuse = Path::new("/dev/fuse").exists() && Command::new("squashfuse").arg("--help").output().is_ok();
    eprintln!("mounted: {mounted}, squashfuse and /dev/fuse present: {fuse}");
    assert!(mounted || !fuse || not_root(), "squashfuse is here but the image was not mounted");
    assert_eq!(leftovers(&tmp), Vec::<String>::new(), "the mount point is removed");
    assert!(!std::fs::read_to_string("/proc/mounts").unwrap().contains(&tmp.display().to_string()), "unmounted");
}

/// A user without root may lack fusermount3; then extracting is right.
fn not_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() != "0").unwrap_or(true)
}

#[test]
fn a_file_without_an_image_is_refused() {
    let out = Command::new(RUNTIME).arg("--appimage-offset").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an AppImage"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_sigkilled_appimage_still_stops_its_app_and_removes_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("app-pid");
    let path = appimage(dir.path(), &format!("#!/bin/sh\necho $$ > {}\nexec sleep 60\n", mark.display()));
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    for args in [&["--appimage-extract-and-run"][..], &[][..]] {
        let _ = std::fs::remove_file(&mark);
        let mut child = Command::new(&path).args(args).env("TMPDIR", &tmp).spawn().unwrap();
        let started = std::time::Instant::now();
        while !mark.exists() || std::fs::read_to_string(&mark).unwrap().trim().is_empty() {
            assert!(started.elapsed().as_secs() < 20, "AppRun did not start");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let app: i32 = std::fs::read_to_string(&mark).unwrap().trim().parse().unwrap();
        assert!(!leftovers(&tmp).is_empty(), "{args:?}: the image is extracted or mounted while the app runs");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let started = std::time::Instant::now();
        while !leftovers(&tmp).is_empty() || Path::new(&format!("/proc/{app}")).exists() {
            assert!(started.elapsed().as_secs() < 10, "{args:?}: left {:?}, app alive {}", leftovers(&tmp), Path::new(&format!("/proc/{app}")).exists());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
