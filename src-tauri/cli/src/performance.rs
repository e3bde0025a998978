//! Performance data from the command line: `account add|list|rename|delete`,
//! `publication add|list|show|edit|remove|restore|purge`, `perf add|list|keys|import|account-days|report|dashboard|export|summary|context`.

use clap::{Args, Subcommand};
use inkstone_api::api::{ApiError, ErrorCode};
use inkstone_api::Engine;
use serde_json::{json, Map, Value};

use crate::commands::{call, s};
use crate::Failure;

mod output;

use output::{metrics_line, print_context_state, print_dashboard, print_import, print_publication, show};

#[derive(Debug, Subcommand)]
pub enum AccountCommand {
    /// Add a publishing account: `account add --platform wechat "墨砚官方号" --handle gh_123`.
    Add {
        #[arg(long)]
        platform: String,
        name: String,
        #[arg(long)]
        handle: Option<String>,
    },
    /// List the workspace's accounts.
    List,
    /// Rename an account or change its handle (`--handle ""` clears it).
    Edit {
        account: String,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        handle: Option<String>,
    },
    /// Delete an account no publication names.
    Delete { account: String },
}

/// The details of a publication; absent ones take the defaults (add) or stay (edit).
#[derive(Debug, Args)]
pub struct PublicationArgs {
    /// The version that went out (default: the latest).
    #[arg(long = "version")]
    version_number: Option<u32>,
    /// The account id (`acc_…`); `""` clears it on edit.
    #[arg(long)]
    account: Option<String>,
    #[arg(long)]
    url: Option<String>,
    /// The platform's id of the post.
    #[arg(long = "post-id")]
    post_id: Option<String>,
    #[arg(long)]
    title: Option<String>,
    /// `2026-03-04 12:30` in --tz (default: the platform's, Asia/Shanghai or UTC for x), or RFC 3339.
    #[arg(long = "at")]
    published_at: Option<String>,
    #[arg(long = "tz")]
    time_zone: Option<String>,
    /// article, answer, imageText, video, thread, post or other.
    #[arg(long)]
    format: Option<String>,
    /// organic, boosted, notified, unnotified or unknown.
    #[arg(long)]
    distribution: Option<String>,
    /// public or private.
    #[arg(long)]
    visibility: Option<String>,
}

impl PublicationArgs {
    fn details(self) -> Value {
        let mut d = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                d.insert(key.to_owned(), v);
            }
        };
        put("versionNumber", self.version_number.map(|n| json!(n)));
        put("accountId", self.account.map(Value::String));
        put("url", self.url.map(Value::String));
        put("platformPostId", self.post_id.map(Value::String));
        put("title", self.title.map(Value::String));
        put("publishedAt", self.published_at.map(Value::String));
        put("timeZone", self.time_zone.map(Value::String));
        put("format", self.format.map(Value::String));
        put("distribution", self.distribution.map(Value::String));
        put("visibility", self.visibility.map(Value::String));
        Value::Object(d)
    }
}

#[derive(Debug, Subcommand)]
pub enum PublicationCommand {
    /// Record that a project's version went out on a platform.
    Add {
        project: String,
        #[arg(long)]
        platform: String,
        #[command(flatten)]
        details: PublicationArgs,
    },
    /// List publications (of a project, or all), newest first, with their latest metrics.
    List {
        project: Option<String>,
        #[arg(long)]
        platform: Option<String>,
        /// Removed publications too.
        #[arg(long)]
        removed: bool,
    },
    /// Show one publication with its latest metrics and AI changes.
    Show { publication: String },
    /// Change a publication's details.
    Edit {
        publication: String,
        #[command(flatten)]
        details: PublicationArgs,
    },
    /// Remove a publication: hidden, its metrics kept until `purge`.
    Remove { publication: String },
    /// Undo a removal.
    Restore { publication: String },
    /// Delete a removed publication and its metrics for good.
    Purge {
        publication: String,
        /// Required: yes, delete it and its metrics.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum PerfCommand {
    /// Add metrics read by hand: `perf add PUB --metric views=1.2万 --metric read_completion=45%`.
    Add {
        publication: String,
        /// KEY=VALUE, repeatable; see `perf keys`; `extra.NAME=VALUE` for another number.
        #[arg(long = "metric", value_name = "KEY=VALUE", required = true)]
        metrics: Vec<String>,
        /// When the numbers were read (default: now).
        #[arg(long = "at")]
        observed_at: Option<String>,
    },
    /// A publication's snapshots, oldest first.
    List { publication: String },
    /// Import a platform's own export (CSV): every row is matched to a publication and
    /// previewed; without --dry-run it is written when every row is matched or skipped.
    /// Importing the same file again changes nothing.
    Import {
        file: std::path::PathBuf,
        /// Only show what would happen.
        #[arg(long)]
        dry_run: bool,
        /// Only try this platform's exports.
        #[arg(long)]
        platform: Option<String>,
        /// ROW=PUBLICATION or ROW=skip, repeatable: the person's match for a row.
        #[arg(long = "assign", value_name = "ROW=PUB|skip")]
        assign: Vec<String>,
        /// For an account's daily export (公众号 用户分析): the account its days go to
        /// (default: the platform's only account).
        #[arg(long)]
        account: Option<String>,
    },
    /// An account's days (followers), as its daily exports reported them.
    AccountDays { account: String },
    /// The metric keys, their units and what each counts.
    Keys,
    /// The before/after report on accepted AI changes (an association, not a cause):
    /// each post as a multiple of its account's median at the same age.
    Report {
        #[arg(long)]
        platform: String,
        /// Only this project's publications.
        #[arg(long)]
        project: Option<String>,
        /// A metric key (default: the platform's reach count).
        #[arg(long)]
        metric: Option<String>,
        /// 24h, 72h or 7d (default 24h).
        #[arg(long)]
        age: Option<String>,
    },
    /// The summary the AI reads of a platform: its strongest and weakest eligible posts
    /// as multiples of the account's usual (an association, not a cause).
    Summary {
        #[arg(long)]
        platform: String,
    },
    /// Whether performance history is used in AI context: `perf context` shows it,
    /// `perf context on|off` sets it (a workspace policy that turns it off decides).
    Context {
        #[arg(value_parser = ["on", "off"])]
        set: Option<String>,
    },
    /// The workspace dashboard: publications with their latest metrics (absent is "—",
    /// never 0), each platform's median of a metric over time, and when you post.
    Dashboard {
        #[command(flatten)]
        filter: DashboardFilter,
        /// publishedAt (default), title, platform, account, format or metric:KEY (a metric
        /// orders publications within each platform; platforms are not compared).
        #[arg(long)]
        sort: Option<String>,
        /// Oldest or smallest first.
        #[arg(long)]
        ascending: bool,
        /// Rows shown (default 200, at most 1000).
        #[arg(long)]
        limit: Option<u32>,
        /// The medians' metric key (default: each platform's reach count).
        #[arg(long)]
        metric: Option<String>,
        /// The medians at an age: 24h, 72h or 7d (default: the latest value).
        #[arg(long)]
        age: Option<String>,
    },
    /// Write a performance table as CSV (UTF-8 with a BOM, for Excel): the dashboard's
    /// publications with the filters given (a project's with --project), or with
    /// --report the before/after report's points. Without FILE the CSV goes to stdout.
    Export {
        file: Option<std::path::PathBuf>,
        #[command(flatten)]
        filter: DashboardFilter,
        /// The before/after report's points instead (needs --platform).
        #[arg(long)]
        report: bool,
        /// The report's metric key.
        #[arg(long)]
        metric: Option<String>,
        /// The report's age: 24h, 72h or 7d.
        #[arg(long)]
        age: Option<String>,
    },
}

/// The dashboard's filters.
#[derive(Debug, Args)]
pub struct DashboardFilter {
    /// One project's publications.
    #[arg(long)]
    project: Option<String>,
    #[arg(long)]
    platform: Option<String>,
    /// An account id (`acc_…`).
    #[arg(long)]
    account: Option<String>,
    /// article, answer, imageText, video, thread, post or other.
    #[arg(long)]
    format: Option<String>,
    /// Published from this date (YYYY-MM-DD, UTC) or time (RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// Published before this date (YYYY-MM-DD, UTC) or time (RFC 3339).
    #[arg(long)]
    until: Option<String>,
}

/// A date is its midnight UTC; anything else goes to the engine as written, which
/// refuses what is not a time.
fn time(text: String) -> String {
    let is_date = text.len() == 10 && text.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() });
    if is_date {
        format!("{text}T00:00:00Z")
    } else {
        text
    }
}

impl DashboardFilter {
    fn params(self) -> Map<String, Value> {
        let mut params = Map::new();
        let fields = [
            ("projectId", self.project),
            ("platform", self.platform),
            ("accountId", self.account),
            ("format", self.format),
            ("from", self.since.map(time)),
            ("to", self.until.map(time)),
        ];
        for (key, value) in fields {
            if let Some(value) = value {
                params.insert(key.to_owned(), Value::String(value));
            }
        }
        params
    }
}

fn metric_pairs(metrics: &[String]) -> Result<Value, Failure> {
    let mut map = Map::new();
    for pair in metrics {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(Failure::Usage(format!("--metric {pair:?}: write KEY=VALUE, e.g. views=1.2万")));
        };
        map.insert(key.trim().to_owned(), Value::String(value.trim().to_owned()));
    }
    Ok(Value::Object(map))
}

pub fn account(engine: &Engine, command: AccountCommand, as_json: bool) -> Result<(), Failure> {
    let one = |a: &Value| println!("{}  {:<11} {}  {}", s(a, "id"), s(a, "platform"), s(a, "name"), s(a, "handle"));
    match command {
        AccountCommand::Add { platform, name, handle } => show(as_json, &call(engine, "account.create", json!({"platform": platform, "name": name, "handle": handle}))?, one),
        AccountCommand::List => show(as_json, &call(engine, "account.list", json!({}))?, |r| r["accounts"].as_array().into_iter().flatten().for_each(one)),
        AccountCommand::Edit { account, name, handle } => show(as_json, &call(engine, "account.update", json!({"accountId": account, "name": name, "handle": handle}))?, one),
        AccountCommand::Delete { account } => show(as_json, &call(engine, "account.delete", json!({"accountId": account}))?, |r| println!("Deleted {}", s(r, "id"))),
    }
    Ok(())
}

pub fn publication(engine: &Engine, command: PublicationCommand, as_json: bool) -> Result<(), Failure> {
    let one = |p: &Value| print_publication(p, None);
    match command {
        PublicationCommand::Add { project, platform, details } => {
            show(as_json, &call(engine, "publication.add", json!({"projectId": project, "platform": platform, "details": details.details()}))?, one)
        }
        PublicationCommand::List { project, platform, removed } => {
            let result = call(engine, "publication.list", json!({"projectId": project, "platform": platform, "includeRemoved": removed}))?;
            show(as_json, &result, |r| {
                let list = r["publications"].as_array().cloned().unwrap_or_default();
                if list.is_empty() {
                    println!("No publications. Add one with `inkstone-cli publication add PROJECT --platform P --url URL`.");
                }
                for v in &list {
                    print_publication(&v["publication"], Some(&v["latest"]));
                }
            })
        }
        PublicationCommand::Show { publication } => show(as_json, &call(engine, "publication.get", json!({"publicationId": publication}))?, |v| {
            print_publication(&v["publication"], Some(&v["latest"]));
            for c in v["publication"]["aiChanges"].as_array().into_iter().flatten() {
                println!("    v{} AI {} {} {}", c["versionNumber"], s(c, "proposalKind"), s(c, "proposalId"), s(c, "model"));
            }
        }),
        PublicationCommand::Edit { publication, details } => {
            show(as_json, &call(engine, "publication.edit", json!({"publicationId": publication, "details": details.details()}))?, one)
        }
        PublicationCommand::Remove { publication } => show(as_json, &call(engine, "publication.remove", json!({"publicationId": publication}))?, |p| {
            println!("Removed {}; its metrics are kept until `inkstone-cli publication purge {} --yes`.", s(p, "id"), s(p, "id"))
        }),
        PublicationCommand::Restore { publication } => show(as_json, &call(engine, "publication.restore", json!({"publicationId": publication}))?, one),
        PublicationCommand::Purge { publication, yes } => show(as_json, &call(engine, "publication.purge", json!({"publicationId": publication, "confirm": yes}))?, |r| {
            println!("Deleted {} and {} snapshot(s).", s(r, "id"), r["snapshotsDeleted"])
        }),
    }
    Ok(())
}

pub fn perf(engine: &Engine, command: PerfCommand, as_json: bool) -> Result<(), Failure> {
    match command {
        PerfCommand::Add { publication, metrics, observed_at } => {
            let params = json!({"publicationId": publication, "metrics": metric_pairs(&metrics)?, "observedAt": observed_at});
            show(as_json, &call(engine, "perf.add", params)?, |snap| println!("{}  {}", s(snap, "id"), metrics_line(snap)))
        }
        PerfCommand::List { publication } => show(as_json, &call(engine, "perf.list", json!({"publicationId": publication}))?, |r| {
            for snap in r["snapshots"].as_array().into_iter().flatten() {
                println!("{}  {}", s(snap, "id"), metrics_line(snap));
            }
        }),
        PerfCommand::Import { file, dry_run, platform, assign, account } => {
            let mut map = Map::new();
            for pair in &assign {
                let Some((row, choice)) = pair.split_once('=') else {
                    return Err(Failure::Usage(format!("--assign {pair:?}: write ROW=PUBLICATION or ROW=skip")));
                };
                map.insert(row.trim().to_owned(), Value::String(choice.trim().to_owned()));
            }
            let params = json!({"path": file.display().to_string(), "platform": platform, "assign": map, "commit": !dry_run, "accountId": account});
            show(as_json, &call(engine, "perf.import", params)?, print_import)
        }
        PerfCommand::AccountDays { account } => show(as_json, &call(engine, "perf.accountDays", json!({"accountId": account}))?, |r| {
            println!("{} ({})", s(&r["account"], "name"), s(&r["account"], "platform"));
            for day in r["days"].as_array().into_iter().flatten() {
                let m = &day["metrics"];
                let n = |k: &str| m[k]["value"].as_f64().map_or("—".to_owned(), |v| v.to_string());
                println!(
                    "  {}  followers {:>8}  new {:>6}  lost {:>6}  net {:>6}",
                    s(day, "date"),
                    n("followers_total"),
                    n("followers_new"),
                    n("followers_lost"),
                    n("followers_net")
                );
            }
        }),
        PerfCommand::Keys => show(as_json, &call(engine, "perf.keys", json!({}))?, |r| {
            for k in r["keys"].as_array().into_iter().flatten() {
                println!("{:<26} {:<8} {}", s(k, "key"), s(k, "unit"), s(k, "basis"));
            }
        }),
        PerfCommand::Summary { platform } => show(as_json, &call(engine, "perf.summary", json!({"platform": platform}))?, |r| {
            if r["text"].as_str().is_some_and(|t| !t.is_empty()) {
                print!("{}", s(r, "text"));
            } else {
                println!("Not enough eligible posts on {} to compare ({} eligible).", s(r, "platform"), r["eligible"]);
            }
        }),
        PerfCommand::Context { set } => {
            let result = match set {
                Some(on) => call(engine, "perf.setContextSetting", json!({"enabled": on == "on"}))?,
                None => call(engine, "perf.contextSetting", json!({}))?,
            };
            show(as_json, &result, print_context_state)
        }
        PerfCommand::Report { platform, project, metric, age } => {
            let params = json!({"platform": platform, "projectId": project, "metric": metric, "bucket": age});
            show(as_json, &call(engine, "perf.report", params)?, |r| {
                println!("Association, not causation. {} at {}, as a multiple of the account's median:", s(r, "metric"), s(r, "bucket"));
                for (label, side) in [("with AI changes", &r["withAi"]), ("without", &r["withoutAi"])] {
                    match side["medianMultiple"].as_f64() {
                        Some(m) => println!(
                            "  {label:<16} n={:<4} median {m:.2}x  (p30-p70 {:.2}x-{:.2}x)",
                            side["n"],
                            side["p30"].as_f64().unwrap_or(0.0),
                            side["p70"].as_f64().unwrap_or(0.0)
                        ),
                        None => println!("  {label:<16} n={:<4} not enough data (at least 3 needed)", side["n"]),
                    }
                }
                if r["afterWeakPost"].as_u64().unwrap_or(0) > 0 {
                    println!("  {} post(s) with AI changes followed an unusually weak post (regression to the mean).", r["afterWeakPost"]);
                }
            })
        }
        PerfCommand::Dashboard { filter, sort, ascending, limit, metric, age } => {
            let mut params = filter.params();
            let extra = [("sort", sort.map(Value::String)), ("metric", metric.map(Value::String)), ("age", age.map(Value::String)), ("limit", limit.map(|n| json!(n)))];
            for (key, value) in extra {
                if let Some(value) = value {
                    params.insert(key.to_owned(), value);
                }
            }
            if ascending {
                params.insert("descending".to_owned(), Value::Bool(false));
            }
            show(as_json, &call(engine, "perf.dashboard", Value::Object(params))?, print_dashboard)
        }
        PerfCommand::Export { file, filter, report, metric, age } => {
            let params = if report {
                let f = filter.params();
                json!({"report": {"platform": f.get("platform"), "projectId": f.get("projectId"), "metric": metric, "bucket": age}})
            } else {
                json!({"dashboard": Value::Object(filter.params())})
            };
            let result = call(engine, "perf.export", params)?;
            let csv = result["csv"].as_str().unwrap_or_default();
            match file {
                None => {
                    use std::io::Write as _;
                    std::io::stdout().write_all(csv.as_bytes()).map_err(|e| Failure::Api(ApiError::new(ErrorCode::Io, format!("Cannot write the CSV: {e}"))))?;
                }
                Some(file) => {
                    // Written beside the target and renamed, so a failed write leaves no half file.
                    let partial = file.with_extension("csv.partial");
                    std::fs::write(&partial, csv.as_bytes())
                        .and_then(|()| std::fs::rename(&partial, &file))
                        .map_err(|e| Failure::Api(ApiError::new(ErrorCode::Io, format!("Cannot write {}: {e}", file.display()))))?;
                    let summary = json!({"path": file.display().to_string(), "nRows": result["nRows"], "table": result["table"]});
                    show(as_json, &summary, |r| println!("Wrote {} rows of the {} to {}", r["nRows"], s(r, "table"), s(r, "path")));
                }
            }
        }
    }
    Ok(())
}
