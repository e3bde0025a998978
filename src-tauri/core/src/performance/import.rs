//! Import of a platform's own export. Which file it is, and how its headers map to
//! metric keys, is data: one versioned file per export under `profiles/metrics/`
//! (`x-content@v1.toml`, ...), embedded at build time, so a platform changing its
//! export is a data change with a test, not new code.
//!
//! The file's kind is sniffed from its bytes, never its name: OLE/BIFF `.xls`
//! (`D0 CF 11 E0`), `.xlsx` (`PK 03 04`), HTML (a leading `<`), otherwise text. The
//! spreadsheets are read with `calamine` (its first sheet holding a cell; date cells
//! become `2026-03-05 20:00:00` text, so a profile's time formats read them). Text
//! is decoded by its BOM, then as strict UTF-8, then as GB18030 (what Excel on a Chinese
//! Windows writes when a sheet is saved as CSV). The header row is found by a profile's
//! signature in the first 20 rows, so a title row above it is fine.
//!
//! Rows are matched to publications of the profile's platform by post id (also the one
//! in a post's URL), then by URL, then by title and publishing time (within 5 minutes,
//! or the same day for an export that gives only the date). Each row of the preview
//! says what would happen; nothing is written until the import is committed, in one
//! batch, and a file already imported (by SHA-256) changes nothing.

use std::collections::BTreeMap;

use calamine::Reader as _;
use chrono::{NaiveDate, NaiveDateTime, TimeZone};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::metrics::{self, MetricSnapshot, MetricValue, SnapshotSource, SnapshotWindow};
use super::Publication;
use crate::error::{ApiError, ErrorCode};
use crate::model::{Platform, Timestamp};
use crate::store::{Kind, Record};

const BUILTIN: &[(&str, &str)] = &[
    ("x-content@v1.toml", include_str!("../../../../profiles/metrics/x-content@v1.toml")),
    ("x-tweet-activity@v1.toml", include_str!("../../../../profiles/metrics/x-tweet-activity@v1.toml")),
    ("x-account-overview@v1.toml", include_str!("../../../../profiles/metrics/x-account-overview@v1.toml")),
    ("x-account-by-day-legacy@v1.toml", include_str!("../../../../profiles/metrics/x-account-by-day-legacy@v1.toml")),
    ("douyin-works@v1.toml", include_str!("../../../../profiles/metrics/douyin-works@v1.toml")),
    ("xiaohongshu-notes@v1.toml", include_str!("../../../../profiles/metrics/xiaohongshu-notes@v1.toml")),
    ("wechat-notified@v1.toml", include_str!("../../../../profiles/metrics/wechat-notified@v1.toml")),
    ("wechat-user-analysis@v1.toml", include_str!("../../../../profiles/metrics/wechat-user-analysis@v1.toml")),
];

/// Largest file accepted, in bytes.
pub const MAX_FILE_BYTES: usize = 20 * 1024 * 1024;
/// Rows searched for the header.
const HEADER_SEARCH_ROWS: usize = 20;
/// Most rows one import reads.
pub const MAX_ROWS: usize = 100_000;

/// How an export's rows say which post they are.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowColumns {
    pub post_id: Option<String>,
    pub url: Option<String>,
    pub title: Option<String>,
    pub text: Option<String>,
    pub published: Option<String>,
    #[serde(default)]
    pub published_formats: Vec<String>,
    pub time_zone: Option<String>,
    pub format: Option<String>,
    pub private_when: Option<PrivateWhen>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivateWhen {
    pub column: String,
    pub values: Vec<String>,
}

/// One export's profile, as `profiles/metrics/<id>@v<version>.toml` holds it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportProfile {
    pub id: String,
    pub version: u32,
    pub platform: Platform,
    pub name: String,
    /// Headers that must all be in the header row.
    pub signature: Vec<String>,
    /// Set for a file that is recognised but cannot be imported per post: why.
    pub refuse: Option<String>,
    pub window: Option<String>,
    #[serde(default)]
    pub row: RowColumns,
    /// Header → metric key; `key:percent` when the column counts in percent.
    #[serde(default)]
    pub columns: BTreeMap<String, String>,
    /// What one row is: a post (the default) or one day of an account.
    #[serde(default)]
    pub target: ExportTarget,
}

/// What one row of an export describes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ExportTarget {
    /// A post: the row becomes a metric snapshot of its publication.
    #[default]
    Posts,
    /// A day of one account (WeChat 用户分析): the row becomes an account snapshot;
    /// the `published` column is the day.
    Account,
}

/// The built-in export profiles, checked. Errors: INTERNAL for a broken built-in file
/// (a test loads them all).
pub fn profiles() -> Result<Vec<ExportProfile>, ApiError> {
    BUILTIN
        .iter()
        .map(|(file, text)| {
            let profile: ExportProfile = toml::from_str(text).map_err(|e| ApiError::internal(format!("export profile {file}: {e}")))?;
            if format!("{}@v{}.toml", profile.id, profile.version) != *file {
                return Err(ApiError::internal(format!("export profile {file} names itself {}@v{}", profile.id, profile.version)));
            }
            for key in profile.columns.values() {
                let key = key.split(':').next().unwrap_or("");
                if metrics::metric_key(key).is_none() {
                    return Err(ApiError::internal(format!("export profile {file} maps to {key:?}, which is not a metric key")));
                }
            }
            Ok(profile)
        })
        .collect()
}

/// What the bytes of a file are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum FileKind {
    /// OLE/BIFF: an old Excel `.xls`.
    Xls,
    /// A zip: `.xlsx`.
    Xlsx,
    Html,
    Text,
    /// Something else (an image, an archive, ...).
    Binary,
}

/// Sniffs `bytes`.
pub fn sniff(bytes: &[u8]) -> FileKind {
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
        return FileKind::Xls;
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return FileKind::Xlsx;
    }
    let start: Vec<u8> = bytes.iter().copied().skip_while(|b| b.is_ascii_whitespace() || matches!(b, 0xEF | 0xBB | 0xBF)).take(1).collect();
    if start.first() == Some(&b'<') {
        return FileKind::Html;
    }
    let head = &bytes[..bytes.len().min(4096)];
    let controls = head.iter().filter(|b| **b < 0x09 || ((0x0E..0x20).contains(*b) && **b != 0x1B)).count();
    if controls > 0 && !head.starts_with(&[0xFF, 0xFE]) && !head.starts_with(&[0xFE, 0xFF]) {
        return FileKind::Binary;
    }
    FileKind::Text
}

/// Decodes text: its BOM, else strict UTF-8, else GB18030. Returns the text and the
/// encoding's name.
pub fn decode(bytes: &[u8]) -> (String, &'static str) {
    if let Some((encoding, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _) = encoding.decode_without_bom_handling(&bytes[bom..]);
        return (text.into_owned(), encoding.name());
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_owned(), "UTF-8"),
        Err(_) => {
            let (text, _) = encoding_rs::GB18030.decode_without_bom_handling(bytes);
            (text.into_owned(), "gb18030")
        }
    }
}

/// A table read from a file: its rows of cells, and the sheet's name when it has one.
pub struct Table {
    pub sheet: Option<String>,
    pub rows: Vec<Vec<String>>,
}

fn not_an_export(message: String) -> ApiError {
    ApiError::new(ErrorCode::Validation, message.clone())
        .details(serde_json::json!({ "field": "file" }))
        .problem("perf.not_an_export", &[("reason", &message)])
        .hint("export_from_platform", "Download the export from the platform's data centre (数据中心 / Analytics) and import that file as it is.")
}

/// Reads `bytes` as a table. Errors: VALIDATION for a file that is not a table.
pub fn read_table(bytes: &[u8]) -> Result<Table, ApiError> {
    if bytes.is_empty() {
        return Err(not_an_export("The file is empty.".to_owned()));
    }
    if bytes.len() > MAX_FILE_BYTES {
        return Err(not_an_export(format!("The file is {} MB; exports are far smaller (at most {} MB are read).", bytes.len() / (1024 * 1024), MAX_FILE_BYTES / (1024 * 1024))));
    }
    match sniff(bytes) {
        FileKind::Xlsx => {
            let workbook = calamine::Xlsx::new(std::io::Cursor::new(bytes)).map_err(|e| not_an_export(format!("The file is an .xlsx spreadsheet that cannot be read ({e}).")))?;
            spreadsheet(workbook)
        }
        FileKind::Xls => {
            let workbook = calamine::Xls::new(std::io::Cursor::new(bytes)).map_err(|e| not_an_export(format!("The file is an .xls spreadsheet that cannot be read ({e}).")))?;
            spreadsheet(workbook)
        }
        FileKind::Html => html_table(&decode(bytes).0),
        FileKind::Binary => Err(not_an_export("The file is not a table: it holds binary data (an image, an archive or a damaged file).".to_owned())),
        FileKind::Text => {
            let (text, _) = decode(bytes);
            let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
            let mut rows = Vec::new();
            for record in reader.records() {
                let record = record.map_err(|e| not_an_export(format!("The file is not readable as CSV: {e}.")))?;
                rows.push(record.iter().map(|c| c.trim().to_owned()).collect());
                if rows.len() > MAX_ROWS + HEADER_SEARCH_ROWS {
                    return Err(not_an_export(format!("The file has more than {MAX_ROWS} rows.")));
                }
            }
            Ok(Table { sheet: None, rows })
        }
    }
}

/// The first sheet of `workbook` that holds a cell, as text cells: a date cell as
/// `2026-03-05 20:00:00`, a number as Rust writes it (`1200`, `0.112`, never an
/// exponent), an error cell (`#N/A`) as empty. Errors: VALIDATION for an unreadable
/// sheet, an empty workbook or more than [`MAX_ROWS`] rows.
fn spreadsheet<R: std::io::Read + std::io::Seek, W: calamine::Reader<R>>(mut workbook: W) -> Result<Table, ApiError>
where
    W::Error: std::fmt::Display,
{
    for name in workbook.sheet_names() {
        let range = workbook.worksheet_range(&name).map_err(|e| not_an_export(format!("Sheet {name:?} cannot be read ({e}).")))?;
        if range.is_empty() {
            continue;
        }
        if range.height() > MAX_ROWS + HEADER_SEARCH_ROWS {
            return Err(not_an_export(format!("The file has more than {MAX_ROWS} rows.")));
        }
        let rows = range
            .rows()
            .map(|cells| {
                cells
                    .iter()
                    .map(|cell| match cell {
                        calamine::Data::DateTime(d) => d.as_datetime().map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string()).unwrap_or_default(),
                        calamine::Data::Error(_) => String::new(),
                        other => other.to_string().trim().to_owned(),
                    })
                    .collect()
            })
            .collect();
        return Ok(Table { sheet: Some(name), rows });
    }
    Err(not_an_export("The spreadsheet holds no cells.".to_owned()))
}

/// The rows of the HTML tables in `text` (WeChat saves its 用户分析 export as an HTML
/// `<table>` with an `.xls` name): one row per `<tr>`, one cell per `<td>`/`<th>`, its
/// text with whitespace collapsed, and `rowspan`/`colspan` spread so that every row has
/// its header's columns (the export's header spans two rows). html5ever's tokenizer
/// reads the markup as a browser would (entities, unquoted attributes, unclosed
/// cells); the rows need no tree. Errors: VALIDATION when there is no table row, or more
/// than [`MAX_ROWS`].
fn html_table(text: &str) -> Result<Table, ApiError> {
    use html5ever::tendril::StrTendril;
    use html5ever::tokenizer::{BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts};
    use std::cell::RefCell;

    /// A cell as written: its text and how far it spans.
    struct Cell {
        text: String,
        rows: usize,
        cols: usize,
    }
    #[derive(Default)]
    struct Rows {
        rows: Vec<Vec<Cell>>,
        row: Option<Vec<Cell>>,
        cell: Option<Cell>,
    }
    impl Rows {
        fn close_cell(&mut self) {
            if let Some(cell) = self.cell.take() {
                self.row.get_or_insert_with(Vec::new).push(cell);
            }
        }
        fn close_row(&mut self) {
            self.close_cell();
            if let Some(row) = self.row.take() {
                self.rows.push(row);
            }
        }
    }
    struct Sink(RefCell<Rows>);
    fn span(tag: &Tag, name: &str) -> usize {
        tag.attrs.iter().find(|a| &*a.name.local == name).and_then(|a| a.value.trim().parse::<usize>().ok()).unwrap_or(1).clamp(1, 100)
    }
    impl TokenSink for Sink {
        type Handle = ();
        fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
            let mut rows = self.0.borrow_mut();
            match token {
                Token::TagToken(tag) => match (tag.kind, &*tag.name) {
                    // An empty `<tr>` is a row too: a cell above may span into it.
                    (TagKind::StartTag, "tr") => {
                        rows.close_row();
                        rows.row = Some(Vec::new());
                    }
                    (TagKind::StartTag, "td" | "th") => {
                        rows.close_cell();
                        rows.cell = Some(Cell { text: String::new(), rows: span(&tag, "rowspan"), cols: span(&tag, "colspan") });
                    }
                    (TagKind::StartTag, "br") | (TagKind::StartTag, "p") => {
                        if let Some(cell) = rows.cell.as_mut() {
                            cell.text.push(' ');
                        }
                    }
                    (TagKind::EndTag, "td" | "th") => rows.close_cell(),
                    (TagKind::EndTag, "tr" | "table" | "tbody" | "thead") => rows.close_row(),
                    _ => {}
                },
                Token::CharacterTokens(text) => {
                    if let Some(cell) = rows.cell.as_mut() {
                        cell.text.push_str(&text);
                    }
                }
                _ => {}
            }
            TokenSinkResult::Continue
        }
    }

    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(text));
    let tokenizer = Tokenizer::new(Sink(RefCell::new(Rows::default())), TokenizerOpts::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    let mut written = std::mem::take(&mut *tokenizer.sink.0.borrow_mut());
    written.close_row();
    if written.rows.len() > MAX_ROWS + HEADER_SEARCH_ROWS {
        return Err(not_an_export(format!("The file has more than {MAX_ROWS} rows.")));
    }
    // Spread the spans: `carried[c]` is the text a cell above still covers in column c,
    // and for how many more rows.
    let mut carried: Vec<Option<(String, usize)>> = Vec::new();
    let mut rows = Vec::with_capacity(written.rows.len());
    for cells in written.rows {
        let mut row: Vec<String> = Vec::new();
        let mut cells = cells.into_iter().peekable();
        let mut column = 0;
        while cells.peek().is_some() || carried.iter().skip(column).any(Option::is_some) {
            if let Some(Some((text, left))) = carried.get_mut(column) {
                row.push(text.clone());
                *left -= 1;
                if *left == 0 {
                    carried[column] = None;
                }
                column += 1;
                continue;
            }
            let Some(cell) = cells.next() else {
                row.push(String::new());
                column += 1;
                continue;
            };
            let text = cell.text.split_whitespace().collect::<Vec<_>>().join(" ");
            for _ in 0..cell.cols {
                if cell.rows > 1 {
                    if carried.len() <= column {
                        carried.resize(column + 1, None);
                    }
                    carried[column] = Some((text.clone(), cell.rows - 1));
                }
                row.push(text.clone());
                column += 1;
            }
        }
        rows.push(row);
    }
    if rows.iter().all(|r| r.iter().all(String::is_empty)) {
        return Err(not_an_export("The file is an HTML page without a table (the 用户分析 export is a table saved with an .xls name).".to_owned()));
    }
    Ok(Table { sheet: None, rows })
}

/// The profile whose signature a header row in the first rows carries, and that row's
/// index. Errors: VALIDATION naming what was expected, or the profile's refusal.
pub fn recognise<'a>(table: &Table, profiles: &'a [ExportProfile], platform: Option<Platform>) -> Result<(&'a ExportProfile, usize), ApiError> {
    for (index, row) in table.rows.iter().take(HEADER_SEARCH_ROWS).enumerate() {
        for profile in profiles.iter().filter(|p| platform.is_none_or(|want| p.platform == want)) {
            if profile.signature.iter().all(|h| row.iter().any(|cell| cell == h)) {
                if let Some(reason) = &profile.refuse {
                    return Err(ApiError::new(ErrorCode::Validation, reason.clone())
                        .details(serde_json::json!({ "field": "file", "importer": profile.id }))
                        .problem("perf.export_refused", &[("name", &profile.name)])
                        .hint("export_per_post", "Export the per-post (content) file instead."));
                }
                return Ok((profile, index));
            }
        }
    }
    let expected: Vec<&str> = profiles.iter().filter(|p| p.refuse.is_none() && platform.is_none_or(|want| p.platform == want)).map(|p| p.name.as_str()).collect();
    Err(not_an_export(format!("No known export header was found in the first {HEADER_SEARCH_ROWS} rows. Expected one of: {}.", expected.join("; "))))
}

/// What happens to one row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum RowOutcome {
    /// A snapshot of this publication would be (or was) written.
    #[serde(rename_all = "camelCase")]
    Matched { publication_id: String, by: String },
    /// Several publications fit; the person picks one (`assign`).
    #[serde(rename_all = "camelCase")]
    Ambiguous { candidates: Vec<String> },
    /// No publication fits; the person picks one, adds one, or skips the row.
    Unmatched,
    /// The person chose to skip it.
    Skipped,
    /// A value or the time could not be read; `problem` says which.
    NotUnderstood { problem: String },
    /// An account export's day: an account snapshot of `account_id` would be (or was)
    /// written for `date`.
    #[serde(rename_all = "camelCase")]
    AccountDay {
        account_id: String,
        #[ts(type = "string")]
        date: NaiveDate,
    },
}

/// One row of the preview.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct RowPreview {
    /// 1-based, as a spreadsheet numbers it.
    pub row: u32,
    pub title: String,
    pub post_id: Option<String>,
    pub published_at: Option<Timestamp>,
    pub outcome: RowOutcome,
    #[ts(as = "BTreeMap<String, MetricValue>")]
    pub metrics: BTreeMap<String, MetricValue>,
    /// Marked private by the export (Douyin 自见).
    pub private: bool,
}

/// A row read, before matching.
struct ReadRow {
    row: u32,
    title: String,
    post_id: Option<String>,
    url: Option<String>,
    published_at: Option<Timestamp>,
    date_only: bool,
    metrics: BTreeMap<String, MetricValue>,
    extras: BTreeMap<String, MetricValue>,
    raw: Vec<(String, String)>,
    private: bool,
    problem: Option<String>,
}

fn column<'a>(headers: &[String], cells: &'a [String], name: Option<&String>) -> Option<&'a str> {
    let name = name?;
    let index = headers.iter().position(|h| h == name)?;
    cells.get(index).map(String::as_str).filter(|c| !c.is_empty())
}

/// The numeric id at the end of an X or other post URL (`…/status/1234567890`).
pub fn post_id_in_url(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next()?.trim_end_matches('/');
    let last = path.rsplit('/').next()?;
    (path.contains("/status/") && !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())).then(|| last.to_owned())
}

fn read_time(text: &str, formats: &[String], zone: chrono_tz::Tz) -> Option<(Timestamp, bool)> {
    let text = text.trim();
    for format in formats {
        if format.contains("%z") {
            if let Ok(t) = chrono::DateTime::parse_from_str(text, format) {
                return Some((t.with_timezone(&chrono::Utc), false));
            }
        } else if format.contains("%H") {
            if let Ok(naive) = NaiveDateTime::parse_from_str(text, format) {
                return zone.from_local_datetime(&naive).earliest().map(|t| (t.with_timezone(&chrono::Utc), false));
            }
        } else if let Ok(date) = NaiveDate::parse_from_str(text, format) {
            let naive = date.and_hms_opt(0, 0, 0)?;
            return zone.from_local_datetime(&naive).earliest().map(|t| (t.with_timezone(&chrono::Utc), true));
        }
    }
    None
}

fn read_rows(profile: &ExportProfile, table: &Table, header_index: usize) -> Vec<ReadRow> {
    let headers = &table.rows[header_index];
    let zone: chrono_tz::Tz = profile.row.time_zone.as_deref().and_then(|z| z.parse().ok()).unwrap_or(chrono_tz::UTC);
    let known: Vec<&String> =
        [&profile.row.post_id, &profile.row.url, &profile.row.title, &profile.row.text, &profile.row.published, &profile.row.format].into_iter().flatten().collect();
    let mut out = Vec::new();
    for (index, cells) in table.rows.iter().enumerate().skip(header_index + 1) {
        // A blank row, or the header again (a header cell spanning two rows is spread
        // over both).
        if cells.iter().all(String::is_empty) || cells == headers {
            continue;
        }
        let row = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let mut problem = None;
        let mut metrics_out = BTreeMap::new();
        let mut extras = BTreeMap::new();
        for (h, header) in headers.iter().enumerate() {
            let Some(cell) = cells.get(h) else { continue };
            if header.is_empty() || known.contains(&header) {
                continue;
            }
            if let Some(mapping) = profile.columns.get(header) {
                let (key, percent) = mapping.split_once(':').map_or((mapping.as_str(), false), |(k, scale)| (k, scale == "percent"));
                let Some(info) = metrics::metric_key(key) else { continue };
                match metrics::read_value(header, cell, info.unit, percent) {
                    Ok(Some(value)) => {
                        // Two headers for one key (legacy `likes` / `favorites`): the first kept.
                        metrics_out.entry(key.to_owned()).or_insert(value);
                    }
                    Ok(None) => {}
                    Err(e) => problem = Some(e.message),
                }
            } else if let Ok(Some(value)) = metrics::read_value(header, cell, metrics::MetricUnit::Count, false) {
                // Unmapped numbers are kept as the platform's extras; text is in the raw row.
                extras.insert(format!("extra.{}.{header}", profile.platform.as_str()), value);
            }
        }
        let title = column(headers, cells, profile.row.title.as_ref().or(profile.row.text.as_ref())).unwrap_or("").to_owned();
        let url = column(headers, cells, profile.row.url.as_ref()).map(str::to_owned);
        let mut post_id = column(headers, cells, profile.row.post_id.as_ref()).map(str::to_owned);
        // A spreadsheet turns an 18-digit id into 1.23457E+18: take it from the link.
        if post_id.as_deref().is_some_and(|id| !id.bytes().all(|b| b.is_ascii_digit())) {
            post_id = url.as_deref().and_then(post_id_in_url);
        }
        let (published_at, date_only) = match column(headers, cells, profile.row.published.as_ref()) {
            Some(text) => match read_time(text, &profile.row.published_formats, zone) {
                Some((t, d)) => (Some(t), d),
                None => {
                    problem.get_or_insert_with(|| format!("{:?} is not a time this export writes.", text));
                    (None, false)
                }
            },
            None => (None, false),
        };
        let private = profile.row.private_when.as_ref().is_some_and(|p| column(headers, cells, Some(&p.column)).is_some_and(|v| p.values.iter().any(|x| x == v)));
        let raw = headers.iter().zip(cells.iter()).filter(|(h, _)| !h.is_empty()).map(|(h, c)| (h.clone(), c.clone())).collect();
        if problem.is_none() && metrics_out.is_empty() && extras.is_empty() {
            problem = Some("The row holds no number.".to_owned());
        }
        out.push(ReadRow { row, title, post_id, url, published_at, date_only, metrics: metrics_out, extras, raw, private, problem });
    }
    out
}

fn normalized_url(url: &str) -> String {
    url.trim().trim_end_matches('/').replacen("http://", "https://", 1)
}

/// The live publications of one import, indexed once, so that each row is matched in
/// constant time (a lookup by post id, by URL, or a binary search by publishing time)
/// instead of by a scan of every publication: a 10,000-row export against 10,000
/// publications was 10^8 comparisons. The rows fit exactly the publications the rules
/// above name, in the order of `publications`.
struct Matcher<'a> {
    publications: &'a [Publication],
    /// A platform post id → publications with that id or with a URL carrying it.
    by_post_id: std::collections::HashMap<String, Vec<usize>>,
    /// A normalised URL → publications with that URL.
    by_url: std::collections::HashMap<String, Vec<usize>>,
    /// Every publication, by publishing time (then position).
    by_time: Vec<usize>,
    by_id: std::collections::HashMap<&'a str, usize>,
}

impl<'a> Matcher<'a> {
    fn new(publications: &'a [Publication]) -> Matcher<'a> {
        let mut by_post_id: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
        let mut by_url: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
        for (i, p) in publications.iter().enumerate() {
            let from_url = p.url.as_deref().and_then(post_id_in_url);
            for id in p.platform_post_id.iter().chain(from_url.iter()) {
                let list = by_post_id.entry(id.clone()).or_default();
                // The same id as post id and in the URL: once.
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
            if let Some(url) = &p.url {
                by_url.entry(normalized_url(url)).or_default().push(i);
            }
        }
        let mut by_time: Vec<usize> = (0..publications.len()).collect();
        by_time.sort_by_key(|i| (publications[*i].published_at, *i));
        let by_id = publications.iter().enumerate().map(|(i, p)| (p.id.as_str(), i)).rev().collect();
        Matcher { publications, by_post_id, by_url, by_time, by_id }
    }

    /// The publication `id`, when it is one of these.
    fn publication(&self, id: &str) -> Option<&'a Publication> {
        self.by_id.get(id).map(|i| &self.publications[*i])
    }

    fn listed(&self, list: Option<&Vec<usize>>) -> Vec<&'a Publication> {
        list.map(|l| l.iter().map(|i| &self.publications[*i]).collect()).unwrap_or_default()
    }

    /// The publications `row` fits, and how.
    fn candidates(&self, row: &ReadRow) -> (Vec<&'a Publication>, &'static str) {
        if let Some(id) = &row.post_id {
            let found = self.listed(self.by_post_id.get(id));
            if !found.is_empty() {
                return (found, "postId");
            }
        }
        if let Some(url) = &row.url {
            let found = self.listed(self.by_url.get(&normalized_url(url)));
            if !found.is_empty() {
                return (found, "url");
            }
        }
        let (Some(at), false) = (row.published_at, row.title.is_empty()) else { return (Vec::new(), "") };
        // The publications within a little more than the tolerance, by binary search;
        // the exact tolerance is then checked as the rule says.
        let (from, to) = if row.date_only { (at, at + chrono::Duration::hours(25)) } else { (at - chrono::Duration::minutes(7), at + chrono::Duration::minutes(7)) };
        let start = self.by_time.partition_point(|i| self.publications[*i].published_at < from);
        let end = self.by_time.partition_point(|i| self.publications[*i].published_at <= to);
        let mut found: Vec<usize> = self.by_time[start..end.max(start)].iter().copied().filter(|i| title_and_time_fit(row, &self.publications[*i], at)).collect();
        found.sort_unstable();
        (found.into_iter().map(|i| &self.publications[i]).collect(), "titleAndTime")
    }
}

/// `p` has the row's title (or a title the row's starts with) and was published within
/// the tolerance of `at`.
fn title_and_time_fit(row: &ReadRow, p: &Publication, at: Timestamp) -> bool {
    let title = row.title.trim();
    let titled = p.title.trim() == title || (!p.title.trim().is_empty() && title.starts_with(p.title.trim()));
    titled && if row.date_only { (p.published_at - at).num_hours().abs() < 24 && p.published_at >= at } else { (p.published_at - at).num_minutes().abs() <= 5 }
}

/// The result of reading a file: what each row would do.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportPreview {
    /// `sha256:<hex>` of the file's bytes.
    pub file_sha256: String,
    /// `x-content@v1`: the export profile that read it.
    pub importer: String,
    pub importer_name: String,
    pub platform: Platform,
    /// Posts (each row a publication's snapshot) or one account's days.
    pub target: ExportTarget,
    /// For an account export: the account its days are written to (the one given, or the
    /// platform's only account); `None` until the person says which.
    pub account_id: Option<String>,
    pub encoding: String,
    /// Set when this exact file was imported before: nothing more would be written.
    pub already_imported: Option<String>,
    pub rows: Vec<RowPreview>,
    pub matched: u32,
    pub unmatched: u32,
    pub ambiguous: u32,
    pub skipped: u32,
    pub not_understood: u32,
}

/// A committed import, by the file's hash: re-importing the file finds it.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ImportRecord {
    pub id: String,
    pub file_sha256: String,
    pub file_name: String,
    pub importer: String,
    pub snapshots: Vec<String>,
    pub created_at: Timestamp,
}

impl Record for ImportRecord {
    const KIND: Kind = Kind::PerfImports;
    fn key(&self) -> Vec<u8> {
        self.file_sha256.as_bytes().to_vec()
    }
}

/// What a person decided for rows: a publication id, or `skip`.
pub type Assignments = BTreeMap<u32, String>;

/// Reads `bytes`, recognises the export and previews every row against `publications`
/// (live ones), with the person's `assign`ments applied. Writes nothing.
pub fn preview(store: &crate::store::Store, bytes: &[u8], platform: Option<Platform>, publications: &[Publication], assign: &Assignments) -> Result<Prepared, ApiError> {
    preview_for(store, bytes, platform, publications, assign, None)
}

/// [`preview`], with the account an account export's days go to (`account_id`; without
/// it, the platform's only account, if it has exactly one). Errors also VALIDATION for
/// an account that is not one of the export platform's.
pub fn preview_for(
    store: &crate::store::Store,
    bytes: &[u8],
    platform: Option<Platform>,
    publications: &[Publication],
    assign: &Assignments,
    account_id: Option<&str>,
) -> Result<Prepared, ApiError> {
    let table = read_table(bytes)?;
    let all = profiles()?;
    let (profile, header_index) = recognise(&table, &all, platform)?;
    let file_sha256 = crate::store::sha256_ref(bytes);
    let already = store.get::<ImportRecord>(file_sha256.as_bytes())?.map(|r| r.id);
    let live: Vec<Publication> = publications.iter().filter(|p| p.removed_at.is_none() && p.platform == profile.platform).cloned().collect();
    let encoding = match sniff(bytes) {
        FileKind::Text => decode(bytes).1,
        FileKind::Xlsx => "xlsx",
        FileKind::Xls => "xls",
        FileKind::Html => decode(bytes).1,
        FileKind::Binary => "binary",
    };
    let account = match (profile.target, account_id) {
        (ExportTarget::Posts, _) => None,
        (ExportTarget::Account, Some(id)) => Some(super::publications::account_for(store, id, profile.platform)?.id),
        (ExportTarget::Account, None) => {
            let mine: Vec<super::Account> = super::accounts(store)?.into_iter().filter(|a| a.platform == profile.platform).collect();
            (mine.len() == 1).then(|| mine[0].id.clone())
        }
    };
    let zone: chrono_tz::Tz = profile.row.time_zone.as_deref().and_then(|z| z.parse().ok()).unwrap_or(chrono_tz::UTC);
    let matcher = Matcher::new(&live);
    let mut rows = Vec::new();
    let mut counts = [0u32; 5];
    for read in read_rows(profile, &table, header_index) {
        let outcome = if assign.get(&read.row).is_some_and(|c| c == "skip") {
            RowOutcome::Skipped
        } else if let Some(problem) = &read.problem {
            RowOutcome::NotUnderstood { problem: problem.clone() }
        } else if profile.target == ExportTarget::Account {
            match (&account, read.published_at) {
                (Some(account_id), Some(at)) => RowOutcome::AccountDay { account_id: account_id.clone(), date: at.with_timezone(&zone).date_naive() },
                (None, Some(_)) => RowOutcome::Unmatched,
                (_, None) => RowOutcome::NotUnderstood { problem: "The row has no day.".to_owned() },
            }
        } else if let Some(choice) = assign.get(&read.row) {
            if matcher.publication(choice).is_some() {
                RowOutcome::Matched { publication_id: choice.clone(), by: "person".to_owned() }
            } else {
                return Err(ApiError::validation(
                    &format!("assign.{}", read.row),
                    format!("Row {}: {choice:?} is not a live {} publication.", read.row, profile.platform.as_str()),
                )
                .problem("perf.bad_assignment", &[("row", &read.row.to_string())]));
            }
        } else {
            let (found, by) = matcher.candidates(&read);
            match found.len() {
                0 => RowOutcome::Unmatched,
                1 => RowOutcome::Matched { publication_id: found[0].id.clone(), by: by.to_owned() },
                _ => RowOutcome::Ambiguous { candidates: found.iter().map(|p| p.id.clone()).collect() },
            }
        };
        let slot = match outcome {
            RowOutcome::Matched { .. } | RowOutcome::AccountDay { .. } => 0,
            RowOutcome::Unmatched => 1,
            RowOutcome::Ambiguous { .. } => 2,
            RowOutcome::Skipped => 3,
            RowOutcome::NotUnderstood { .. } => 4,
        };
        counts[slot] += 1;
        let preview =
            RowPreview { row: read.row, title: read.title, post_id: read.post_id, published_at: read.published_at, outcome, metrics: read.metrics, private: read.private };
        rows.push(PreparedRow { preview, extras: read.extras, raw: read.raw });
    }
    let summary = ImportPreview {
        file_sha256,
        importer: format!("{}@v{}", profile.id, profile.version),
        importer_name: profile.name.clone(),
        platform: profile.platform,
        target: profile.target,
        account_id: account.clone(),
        encoding: encoding.to_owned(),
        already_imported: already.clone(),
        rows: rows.iter().map(|r| r.preview.clone()).collect(),
        matched: counts[0],
        unmatched: counts[1],
        ambiguous: counts[2],
        skipped: counts[3],
        not_understood: counts[4],
    };
    Ok(Prepared { summary, rows, profile: profile.clone(), already_imported: already, sheet: table.sheet.clone() })
}

/// A row ready to write: its preview, and what the snapshot keeps beside the metrics.
pub struct PreparedRow {
    pub preview: RowPreview,
    pub extras: BTreeMap<String, MetricValue>,
    pub raw: Vec<(String, String)>,
}

/// A file read and previewed.
pub struct Prepared {
    pub summary: ImportPreview,
    pub rows: Vec<PreparedRow>,
    pub profile: ExportProfile,
    pub already_imported: Option<String>,
    /// The sheet the rows came from (a spreadsheet's).
    pub sheet: Option<String>,
}

/// Adds a snapshot for every matched row of `prepared`, and the import's record, to
/// `batch`.
pub fn stage_commit(
    kernel: &crate::kernel::Kernel,
    batch: &mut crate::store::Batch,
    file_name: &str,
    prepared: Prepared,
    publications: &[Publication],
) -> Result<Vec<MetricSnapshot>, ApiError> {
    let Prepared { summary, rows, profile, sheet, .. } = prepared;
    let import_id = kernel.new_id("imp");
    let observed_at = kernel.now();
    let mut written = Vec::new();
    let by_id: std::collections::HashMap<&str, &Publication> = publications.iter().rev().map(|p| (p.id.as_str(), p)).collect();
    for PreparedRow { preview: row, extras, raw } in rows {
        let RowOutcome::Matched { publication_id, .. } = &row.outcome else { continue };
        let Some(publication) = by_id.get(publication_id.as_str()).copied() else { continue };
        let source = SnapshotSource::Import {
            import_id: import_id.clone(),
            file_sha256: summary.file_sha256.clone(),
            importer: profile.id.clone(),
            importer_version: profile.version,
            sheet: sheet.clone(),
            row: row.row,
            raw_row: raw,
        };
        // An export read before the publication's recorded time (a wrong time typed by
        // hand) is still an observation now; its age is then 0.
        let observed = observed_at.max(publication.published_at);
        // Every per-post export profile so far is cumulative (`window = "cumulative"`).
        let window = SnapshotWindow::Cumulative;
        written.push(metrics::stage_snapshot(kernel, batch, publication, observed, window, source, row.metrics, extras)?);
    }
    let record = ImportRecord {
        id: import_id,
        file_sha256: summary.file_sha256.clone(),
        file_name: file_name.to_owned(),
        importer: summary.importer.clone(),
        snapshots: written.iter().map(|s| s.id.clone()).collect(),
        created_at: observed_at,
    };
    batch.put(&record)?;
    Ok(written)
}

/// Adds an account snapshot for every day of an account export, and the import's
/// record, to `batch`.
pub fn stage_account_commit(
    kernel: &crate::kernel::Kernel,
    batch: &mut crate::store::Batch,
    file_name: &str,
    prepared: Prepared,
) -> Result<Vec<super::account_days::AccountSnapshot>, ApiError> {
    let Prepared { summary, rows, profile, sheet, .. } = prepared;
    let import_id = kernel.new_id("imp");
    let now = kernel.now();
    let mut written = Vec::new();
    for PreparedRow { preview: row, raw, .. } in rows {
        let RowOutcome::AccountDay { account_id, date } = &row.outcome else { continue };
        let snapshot = super::account_days::AccountSnapshot {
            id: kernel.new_id("asn"),
            account_id: account_id.clone(),
            platform: profile.platform,
            date: *date,
            source: SnapshotSource::Import {
                import_id: import_id.clone(),
                file_sha256: summary.file_sha256.clone(),
                importer: profile.id.clone(),
                importer_version: profile.version,
                sheet: sheet.clone(),
                row: row.row,
                raw_row: raw,
            },
            metrics: row.metrics,
            created_at: now,
        };
        batch.put(&snapshot)?;
        super::sync::stage_day_delivery(kernel, batch, &snapshot)?;
        written.push(snapshot);
    }
    let record = ImportRecord {
        id: import_id,
        file_sha256: summary.file_sha256.clone(),
        file_name: file_name.to_owned(),
        importer: summary.importer.clone(),
        snapshots: written.iter().map(|s| s.id.clone()).collect(),
        created_at: now,
    };
    batch.put(&record)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The matcher before the index: a scan of every publication per row, kept as the
    /// reference the indexed [`Matcher`] must agree with.
    fn linear_candidates<'a>(row: &ReadRow, publications: &'a [Publication]) -> (Vec<&'a Publication>, &'static str) {
        if let Some(id) = &row.post_id {
            let found: Vec<&Publication> = publications
                .iter()
                .filter(|p| p.platform_post_id.as_deref() == Some(id.as_str()) || p.url.as_deref().and_then(post_id_in_url).as_deref() == Some(id.as_str()))
                .collect();
            if !found.is_empty() {
                return (found, "postId");
            }
        }
        if let Some(url) = &row.url {
            let url = normalized_url(url);
            let found: Vec<&Publication> = publications.iter().filter(|p| p.url.as_deref().map(normalized_url).as_deref() == Some(url.as_str())).collect();
            if !found.is_empty() {
                return (found, "url");
            }
        }
        let (Some(at), false) = (row.published_at, row.title.is_empty()) else { return (Vec::new(), "") };
        let title = row.title.trim();
        let found: Vec<&Publication> = publications
            .iter()
            .filter(|p| p.title.trim() == title || (!p.title.trim().is_empty() && title.starts_with(p.title.trim())))
            .filter(|p| if row.date_only { (p.published_at - at).num_hours().abs() < 24 && p.published_at >= at } else { (p.published_at - at).num_minutes().abs() <= 5 })
            .collect();
        (found, "titleAndTime")
    }

    fn ids(found: &(Vec<&Publication>, &'static str)) -> (Vec<String>, &'static str) {
        (found.0.iter().map(|p| p.id.clone()).collect(), found.1)
    }

    fn base() -> Timestamp {
        chrono::Utc.with_ymd_and_hms(2026, 3, 5, 12, 0, 0).unwrap()
    }

    fn publication(i: usize, post_id: Option<String>, url: Option<String>, title: String, minutes: i64) -> Publication {
        Publication {
            id: format!("pub_{i:04}"),
            project_id: "prj_1".into(),
            platform: Platform::X,
            version_number: 1,
            version_id: "ver_1".into(),
            account_id: None,
            url,
            platform_post_id: post_id,
            title,
            published_at: base() + chrono::Duration::seconds(minutes * 60 + (i as i64 % 7) * 13),
            time_zone: "UTC".into(),
            format: super::super::PublicationFormat::Post,
            distribution: super::super::Distribution::Organic,
            visibility: super::super::Visibility::Public,
            ai_changes: Vec::new(),
            previous_version_number: None,
            removed_at: None,
            created_by: "t".into(),
            created_at: base(),
            updated_at: base(),
        }
    }

    fn row(post_id: Option<String>, url: Option<String>, title: String, at: Option<Timestamp>, date_only: bool) -> ReadRow {
        ReadRow { row: 2, title, post_id, url, published_at: at, date_only, metrics: BTreeMap::new(), extras: BTreeMap::new(), raw: Vec::new(), private: false, problem: None }
    }

    // Few ids, URLs, titles and times, so that rows often fit one, several or no
    // publication, by each rule.
    const TITLES: [&str; 6] = ["春天来了", "春天来了 #春天", " 春天 ", "", "Spring", "Spring is here"];

    fn url_of(n: u8) -> Option<String> {
        match n % 6 {
            0 => None,
            1 => Some(format!("https://x.com/a/status/{}", 100 + n % 3)),
            2 => Some(format!("http://x.com/a/status/{}/", 100 + n % 3)),
            3 => Some(format!("https://www.xiaohongshu.com/explore/{}", n % 2)),
            4 => Some(format!("https://www.xiaohongshu.com/explore/{}/", n % 2)),
            _ => Some("https://example.com/post?id=7".to_owned()),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn the_indexed_matcher_finds_what_the_linear_scan_found(
            pubs in proptest::collection::vec((0u8..8, 0u8..12, 0usize..6, -30i64..1600), 0..40),
            rows in proptest::collection::vec((0u8..8, 0u8..12, 0usize..6, -30i64..1600, any::<bool>(), any::<bool>()), 1..30),
        ) {
            let publications: Vec<Publication> = pubs
                .iter()
                .enumerate()
                .map(|(i, (id, url, title, minutes))| publication(i, (*id < 4).then(|| format!("{}", 100 + id)), url_of(*url), TITLES[*title].to_owned(), *minutes))
                .collect();
            let matcher = Matcher::new(&publications);
            for (id, url, title, minutes, date_only, timed) in rows {
                let at = if date_only { base() + chrono::Duration::days(minutes / 600) } else { base() + chrono::Duration::minutes(minutes) };
                let r = row((id < 5).then(|| format!("{}", 100 + id)), url_of(url), TITLES[title].to_owned(), timed.then_some(at), date_only);
                prop_assert_eq!(ids(&matcher.candidates(&r)), ids(&linear_candidates(&r, &publications)));
            }
        }
    }

    /// The rows of the committed fixtures (tests/fixtures/performance), matched against
    /// publications made from those rows (by post id, by URL, by title and time, two
    /// of each where one should be ambiguous, and none), fit the same publications by
    /// the same rule with the index as with the scan.
    #[test]
    fn on_the_fixture_files_the_indexed_matcher_agrees_with_the_linear_scan() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/performance");
        let all = profiles().unwrap();
        let mut checked = 0;
        for file in ["xiaohongshu-notes.csv", "xiaohongshu-notes.xlsx", "xiaohongshu-notes.xls"] {
            let table = read_table(&std::fs::read(dir.join(file)).unwrap()).unwrap();
            let (profile, header) = recognise(&table, &all, None).unwrap();
            let read = read_rows(profile, &table, header);
            assert!(!read.is_empty(), "{file}");
            let mut publications = Vec::new();
            for (k, r) in read.iter().enumerate() {
                let Some(at) = r.published_at else { continue };
                let minutes = (at - base()).num_minutes();
                // Matched by title and time (one), ambiguous (two), or a near miss.
                let copies = k % 3;
                for c in 0..copies {
                    publications
                        .push(Publication { published_at: at + chrono::Duration::minutes(c as i64 * 2), ..publication(publications.len(), None, None, r.title.clone(), minutes) });
                }
                publications.push(Publication { published_at: at + chrono::Duration::minutes(9), ..publication(publications.len(), None, None, r.title.clone(), minutes) });
                if let Some(id) = &r.post_id {
                    publications.push(publication(publications.len(), Some(id.clone()), None, String::new(), 0));
                }
                if let Some(url) = &r.url {
                    publications.push(publication(publications.len(), None, Some(url.clone()), String::new(), 0));
                }
            }
            let matcher = Matcher::new(&publications);
            for r in &read {
                let (indexed, linear) = (ids(&matcher.candidates(r)), ids(&linear_candidates(r, &publications)));
                assert_eq!(indexed, linear, "{file} row {}", r.row);
                checked += 1;
            }
            // Nothing fits when there is nothing to fit.
            for r in &read {
                assert_eq!(Matcher::new(&[]).candidates(r).0.len(), 0);
            }
        }
        assert!(checked >= 3);
    }
}
