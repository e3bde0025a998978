//! HTML tables saved with an `.xls` name (WeChat's 用户分析 export).

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts};

use super::{not_an_export, Table, HEADER_SEARCH_ROWS, MAX_ROWS};
use crate::error::ApiError;

/// The rows of the HTML tables in `text` (WeChat saves its 用户分析 export as an HTML
/// `<table>` with an `.xls` name): one row per `<tr>`, one cell per `<td>`/`<th>`, its
/// text with whitespace collapsed, and `rowspan`/`colspan` spread so that every row has
/// its header's columns (the export's header spans two rows). html5ever's tokenizer
/// reads the markup as a browser would (entities, unquoted attributes, unclosed
/// cells); the rows need no tree. Errors: VALIDATION when there is no table row, or more
/// than [`MAX_ROWS`].
pub(super) fn html_table(text: &str) -> Result<Table, ApiError> {
    let written = written_rows(text);
    if written.len() > MAX_ROWS + HEADER_SEARCH_ROWS {
        return Err(not_an_export(format!("The file has more than {MAX_ROWS} rows.")));
    }
    let rows = spread_spans(written);
    if rows.iter().all(|r| r.iter().all(String::is_empty)) {
        return Err(not_an_export("The file is an HTML page without a table (the 用户分析 export is a table saved with an .xls name).".to_owned()));
    }
    Ok(Table { sheet: None, rows })
}

/// A cell as written: its text and how far it spans.
struct Cell {
    text: String,
    rows: usize,
    cols: usize,
}

/// The rows as the markup writes them, and the row and cell open now.
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

/// The tokenizer's sink: it collects the rows and cells the tokens open and close.
struct Sink(RefCell<Rows>);

/// A cell's `rowspan` or `colspan` (1 when absent or unreadable, at most 100).
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

/// The rows of cells the markup of `text` writes, spans not spread yet.
fn written_rows(text: &str) -> Vec<Vec<Cell>> {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(text));
    let tokenizer = Tokenizer::new(Sink(RefCell::new(Rows::default())), TokenizerOpts::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    let mut written = std::mem::take(&mut *tokenizer.sink.0.borrow_mut());
    written.close_row();
    written.rows
}

/// The rows with every span spread: a cell's text fills each column it spans, in its
/// row and in the rows below that its `rowspan` covers.
fn spread_spans(written: Vec<Vec<Cell>>) -> Vec<Vec<String>> {
    // `carried[c]` is the text a cell above still covers in column c, and for how many
    // more rows.
    let mut carried: Vec<Option<(String, usize)>> = Vec::new();
    let mut rows = Vec::with_capacity(written.len());
    for cells in written {
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
    rows
}
