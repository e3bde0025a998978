//! Crash safety: a child process writes at random and is killed with SIGKILL at random
//! moments, again and again on the same data dir. After every kill the store must open
//! and hold every version whose creating call had returned, intact.
//!
//! The child is this same test binary, re-run with `INKSTONE_CRASH_CHILD_DIR` set; it
//! prints `ACK <project> <number> <hash> <syncs>` after each acknowledged version.
//! `INKSTONE_CRASH_SEED` replays a run; `INKSTONE_CRASH_KILLS` changes the count (50).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use inkstone_api::{Engine, EngineConfig};
use inkstone_test_support::Rng;
use serde_json::json;

const CHILD_DIR: &str = "INKSTONE_CRASH_CHILD_DIR";
const CHILD_SEED: &str = "INKSTONE_CRASH_CHILD_SEED";

/// The child's body; a no-op unless this binary was started as the child.
#[test]
fn crash_child_writer() {
    let Ok(dir) = std::env::var(CHILD_DIR) else { return };
    let seed: u64 = std::env::var(CHILD_SEED).ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut rng = Rng(seed | 1);
    let mut config = EngineConfig::new(&dir, "crash-test child");
    config.group_commit_millis = 50;
    let engine = Engine::open(config).expect("child opens the store");
    let mut projects: Vec<String> = engine.call("project.list", json!({})).unwrap()["projects"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_owned()).collect();
    let stdout = std::io::stdout();
    {
        use std::io::Write;
        let mut out = stdout.lock();
        writeln!(out, "READY").unwrap();
        out.flush().unwrap();
    }
    loop {
        if projects.is_empty() || rng.below(10) == 0 {
            let p = engine.call("project.create", json!({"title": format!("p{}", rng.next() % 1000)})).unwrap();
            projects.push(p["id"].as_str().unwrap().to_owned());
            continue;
        }
        let project = projects[rng.below(projects.len() as u64) as usize].clone();
        match rng.below(6) {
            0..=2 => {
                let text = "春眠不觉晓，处处闻啼鸟。The quick brown fox. ".repeat(1 + rng.below(40) as usize);
                engine.call("project.update", json!({"projectId": project, "source": format!("{}{text}", rng.next())})).unwrap();
            }
            3 | 4 => {
                let version = engine.call("version.create", json!({"projectId": project})).unwrap();
                let mut out = stdout.lock();
                use std::io::Write;
                writeln!(out, "ACK {} {} {} {}", project, version["number"], version["contentHash"].as_str().unwrap(), engine.store().durable_sync_count()).unwrap();
                out.flush().unwrap();
            }
            _ => {
                let head = engine.call("project.get", json!({"projectId": project})).unwrap()["head"].as_u64().unwrap();
                if head > 0 {
                    let result = engine.call("version.restore", json!({"projectId": project, "number": 1 + rng.below(head)})).unwrap();
                    let restored = &result["restored"];
                    let mut out = stdout.lock();
                    use std::io::Write;
                    if let Some(snapshot) = result["autosnapshot"].as_object() {
                        writeln!(out, "ACK {} {} {} {}", project, snapshot["number"], snapshot["contentHash"].as_str().unwrap(), engine.store().durable_sync_count()).unwrap();
                    }
                    writeln!(out, "ACK {} {} {} {}", project, restored["number"], restored["contentHash"].as_str().unwrap(), engine.store().durable_sync_count()).unwrap();
                    out.flush().unwrap();
                }
            }
        }
    }
}

#[test]
fn acknowledged_versions_survive_sigkill_at_random_moments() {
    if std::env::var(CHILD_DIR).is_ok() {
        return;
    }
    let seed: u64 = std::env::var("INKSTONE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7));
    let kills: usize = std::env::var("INKSTONE_CRASH_KILLS").ok().and_then(|s| s.parse().ok()).unwrap_or(50);
    eprintln!("crash test: seed {seed}, {kills} kills (replay with INKSTONE_CRASH_SEED={seed})");
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    // project -> number -> content hash, for every acknowledged version so far.
    let mut acknowledged: BTreeMap<(String, u64), String> = BTreeMap::new();
    let mut n_acks_total = 0usize;
    for kill_idx in 0..kills {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash::crash_child_writer", "--nocapture", "--test-threads=1"])
            .env(CHILD_DIR, dir.path())
            .env(CHILD_SEED, rng.next().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let reader = {
            let lines = Arc::clone(&lines);
            let stdout = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    lines.lock().unwrap().push(line);
                }
            })
        };
        // Most kills land while the child writes (its clock starts when it is ready, so
        // a slow start on a loaded machine does not turn them into kills during open);
        // one in five lands anywhere from the spawn on, the opening included.
        if rng.below(5) != 0 {
            let ready_by = std::time::Instant::now() + Duration::from_secs(60);
            // (libtest prints `test <name> ... ` before the child's first line.)
            while !lines.lock().unwrap().iter().any(|l| l.ends_with("READY")) && std::time::Instant::now() < ready_by {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        std::thread::sleep(Duration::from_millis(30 + rng.below(400)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        reader.join().unwrap();
        let mut last_syncs = 0u64;
        for line in lines.lock().unwrap().iter().filter(|l| l.starts_with("ACK ")) {
            let parts: Vec<&str> = line.split(' ').collect();
            // A line cut off by the kill was never fully acknowledged to us.
            let [_, project, number, hash, syncs] = parts[..] else { continue };
            let Ok(syncs) = syncs.parse::<u64>() else { continue };
            if hash.len() != 71 {
                continue;
            }
            assert!(syncs > last_syncs || syncs == last_syncs && last_syncs > 0, "kill {kill_idx}: an acknowledged version was not synced ({line})");
            last_syncs = syncs;
            acknowledged.insert((project.to_owned(), number.parse().unwrap()), hash.to_owned());
            n_acks_total += 1;
        }

        let engine = Engine::open(EngineConfig::for_tests(dir.path())).unwrap_or_else(|e| panic!("kill {kill_idx} (seed {seed}): the store does not open: {e:?}"));
        for ((project, number), hash) in &acknowledged {
            let version = engine
                .call("version.get", json!({"projectId": project, "number": number}))
                .unwrap_or_else(|e| panic!("kill {kill_idx} (seed {seed}): acknowledged version {number} of {project} is lost: {e:?}"));
            assert_eq!(version["contentHash"].as_str(), Some(hash.as_str()), "kill {kill_idx} (seed {seed})");
            let recomputed = inkstone_api::api::content_hash(version["title"].as_str().unwrap(), version["source"].as_str().unwrap());
            assert_eq!(&recomputed, hash, "kill {kill_idx} (seed {seed}): version content is damaged");
        }
        // Every project's versions are numbered 1..=head without gaps.
        for p in engine.call("project.list", json!({})).unwrap()["projects"].as_array().unwrap() {
            let numbers: Vec<u64> =
                engine.call("version.list", json!({"projectId": p["id"]})).unwrap()["versions"].as_array().unwrap().iter().map(|v| v["number"].as_u64().unwrap()).rev().collect();
            assert_eq!(numbers, (1..=p["head"].as_u64().unwrap()).collect::<Vec<_>>(), "kill {kill_idx} (seed {seed})");
        }
    }
    eprintln!("crash test: {kills} kills, {n_acks_total} acknowledged versions, {} distinct, all intact", acknowledged.len());
    assert!(n_acks_total > kills, "the child acknowledged too few versions ({n_acks_total}) for the test to mean anything");
}

const ACCEPT_CHILD_DIR: &str = "INKSTONE_CRASH_ACCEPT_CHILD_DIR";

/// The accept child: proposes a change to one project's source and accepts it, again
/// and again, printing `ACK <proposal> <version> <hash>` after each acknowledged accept.
#[test]
fn crash_child_accepter() {
    let Ok(dir) = std::env::var(ACCEPT_CHILD_DIR) else { return };
    let seed: u64 = std::env::var(CHILD_SEED).ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut rng = Rng(seed | 1);
    let engine = Engine::open(EngineConfig::new(&dir, "crash-test accept child")).expect("child opens the store");
    let projects = engine.call("project.list", json!({})).unwrap()["projects"].as_array().unwrap().clone();
    let id = match projects.first() {
        Some(p) => p["id"].as_str().unwrap().to_owned(),
        None => engine.call("project.create", json!({"title": "接受", "source": "第一段：甲。\n\n第二段：乙。\n\n第三段：丙。\n"})).unwrap()["id"].as_str().unwrap().to_owned(),
    };
    let stdout = std::io::stdout();
    {
        // The parent starts its random wait only now, so a slow start (a loaded
        // machine) does not eat the time in which accepts happen.
        use std::io::Write;
        let mut out = stdout.lock();
        writeln!(out, "READY").unwrap();
        out.flush().unwrap();
    }
    loop {
        let project = inkstone_api::project::load(engine.store(), &id).unwrap();
        // Change one or more paragraphs' endings (each ends in a unique `。\n`-line).
        let lines: Vec<&str> = project.source.split_inclusive('\n').collect();
        let mut next: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        for line in next.iter_mut().filter(|l| l.contains('：')) {
            if rng.below(2) == 0 {
                *line = line.replacen('。', &format!("{}。", rng.below(10)), 1);
            }
        }
        let proposed = next.concat();
        if proposed == project.source {
            continue;
        }
        let proposal = inkstone_api::proposals::create(
            engine.kernel(),
            inkstone_api::proposals::NewProposal {
                project_id: id.clone(),
                kind: inkstone_api::proposals::ProposalKind::SourcePatch,
                target: inkstone_api::proposals::Target::Source,
                summary: "改".into(),
                payload: inkstone_api::proposals::Payload::Text { base_text: project.source.clone(), proposed_text: proposed },
                origin: inkstone_api::proposals::Origin { session_id: Some("ses_crash".into()), model: "m".into(), profile_id: "p".into(), ..Default::default() },
            },
        )
        .unwrap();
        let accepted = engine.call("proposal.accept", json!({"proposalId": proposal.id, "expectedBase": project.revision})).unwrap();
        let mut out = stdout.lock();
        use std::io::Write;
        writeln!(out, "ACK {} {} {}", proposal.id, accepted["version"]["number"], accepted["version"]["contentHash"].as_str().unwrap()).unwrap();
        out.flush().unwrap();
    }
}

/// kill -9 during accepts: after every kill, each proposal is either wholly accepted
/// (its version, its status, its audit record, the working copy moved) or not at all,
/// and every acknowledged accept is there.
#[test]
fn an_accept_is_all_or_nothing_under_sigkill() {
    if std::env::var(CHILD_DIR).is_ok() || std::env::var(ACCEPT_CHILD_DIR).is_ok() {
        return;
    }
    let seed: u64 = std::env::var("INKSTONE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7));
    let kills: usize = std::env::var("INKSTONE_CRASH_KILLS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    eprintln!("accept crash test: seed {seed}, {kills} kills (replay with INKSTONE_CRASH_SEED={seed})");
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut acknowledged: BTreeMap<String, (u64, String)> = BTreeMap::new();
    for kill_idx in 0..kills {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash::crash_child_accepter", "--nocapture", "--test-threads=1"])
            .env(ACCEPT_CHILD_DIR, dir.path())
            .env(CHILD_SEED, rng.next().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let reader = {
            let lines = Arc::clone(&lines);
            let stdout = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    lines.lock().unwrap().push(line);
                }
            })
        };
        // Wait (bounded) for the child to have opened the store, then at random. (libtest
        // prints `test <name> ... ` before the child's first line, so READY ends a line.)
        let ready_by = std::time::Instant::now() + Duration::from_secs(60);
        while !lines.lock().unwrap().iter().any(|l| l.ends_with("READY")) && std::time::Instant::now() < ready_by {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(60 + rng.below(400)));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        for line in lines.lock().unwrap().iter().filter(|l| l.starts_with("ACK ")) {
            let [_, proposal, number, hash] = line.split(' ').collect::<Vec<_>>()[..] else { continue };
            if hash.len() != 71 {
                continue;
            }
            acknowledged.insert(proposal.to_owned(), (number.parse().unwrap(), hash.to_owned()));
        }
        let engine = Engine::open(EngineConfig::for_tests(dir.path())).unwrap_or_else(|e| panic!("kill {kill_idx} (seed {seed}): the store does not open: {e:?}"));
        let Some(project) = engine.call("project.list", json!({})).unwrap()["projects"].as_array().unwrap().first().cloned() else { continue };
        let id = project["id"].as_str().unwrap();
        let versions = inkstone_api::project::versions::list(engine.store(), id).unwrap();
        let audit = inkstone_api::proposals::apply::audit(engine.store(), id).unwrap();
        for proposal in inkstone_api::proposals::list(engine.store(), id).unwrap() {
            let version = versions.iter().find(|v| matches!(&v.origin, inkstone_api::model::VersionOrigin::AiProposal { proposal_id, .. } if *proposal_id == proposal.id));
            let audited = audit.iter().any(|a| a.proposal_id == proposal.id);
            let accepted = proposal.status == inkstone_api::proposals::ProposalStatus::Accepted;
            assert_eq!(accepted, version.is_some(), "kill {kill_idx} (seed {seed}): {} status {:?} but version {:?}", proposal.id, proposal.status, version.map(|v| v.number));
            assert_eq!(accepted, audited, "kill {kill_idx} (seed {seed}): audit of {}", proposal.id);
            if let (Some(version), inkstone_api::proposals::Payload::Text { proposed_text, .. }) = (version, &proposal.payload) {
                assert_eq!(&version.source, proposed_text, "kill {kill_idx} (seed {seed}): the version holds every hunk");
                assert_eq!(proposal.applied.as_ref().and_then(|a| a.version), Some(version.number));
            }
            if let Some((number, hash)) = acknowledged.get(&proposal.id) {
                assert!(accepted, "kill {kill_idx} (seed {seed}): acknowledged accept of {} is lost", proposal.id);
                assert_eq!(version.map(|v| (u64::from(v.number), v.content_hash.clone())), Some((*number, hash.clone())));
            }
        }
        let head = versions.last().map(|v| v.source.clone());
        let current = inkstone_api::project::load(engine.store(), id).unwrap();
        if let Some(head) = head {
            assert_eq!(current.source, head, "kill {kill_idx} (seed {seed}): the working copy is the last accepted text");
        }
    }
    eprintln!("accept crash test: {kills} kills, {} acknowledged accepts, all whole", acknowledged.len());
    assert!(acknowledged.len() > kills, "too few accepts ({}) for the test to mean anything", acknowledged.len());
}
