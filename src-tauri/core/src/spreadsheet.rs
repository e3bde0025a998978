//! Tables written for spreadsheets: CSV in UTF-8 with a byte-order mark (so Excel reads
//! Chinese titles correctly), quoted by the `csv` crate, with every cell a spreadsheet
//! would run as a formula defused. One writer for every export of a table (the AI
//! activity, the performance dashboard, a project's publications, the before/after
//! report), so they cannot drift apart in how they protect a person opening the file.

use std::borrow::Cow;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A cell a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, a tab or a carriage
/// return first) gets a leading apostrophe, so a title or a reason cannot run as one when
/// the file opens. A number the engine wrote (`-0.5`, a negative follower change) is a
/// value, not a formula, and callers pass it through [`Cell::Number`].
pub fn defused(cell: &str) -> Cow<'_, str> {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// One cell: text from people or platforms (defused), or a number the engine wrote.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    Number(String),
}

impl Cell {
    /// An empty cell: a value that is absent (never written as 0).
    pub fn empty() -> Cell {
        Cell::Text(String::new())
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::Text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::Text(text.to_owned())
    }
}

/// Why no CSV came out: only a writer failing on memory, a bug rather than bad input.
#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("The CSV writer failed: {0}")]
    Writer(String),
    #[error("The CSV is not UTF-8.")]
    NotUtf8,
}

/// `header` and `rows` as CSV bytes: the BOM, the header line, one record per row.
pub fn csv_bytes<H: AsRef<str>>(header: &[H], rows: impl IntoIterator<Item = Vec<Cell>>) -> Result<Vec<u8>, CsvError> {
    let internal = |e: csv::Error| CsvError::Writer(e.to_string());
    let mut writer = csv::WriterBuilder::new().flexible(false).from_writer(BOM.to_vec());
    writer.write_record(header.iter().map(|h| defused(h.as_ref()).into_owned())).map_err(internal)?;
    for row in rows {
        writer
            .write_record(row.iter().map(|cell| match cell {
                Cell::Text(text) => defused(text).into_owned(),
                Cell::Number(number) => number.clone(),
            }))
            .map_err(internal)?;
    }
    writer.into_inner().map_err(|e| CsvError::Writer(e.to_string()))
}

/// The CSV as a string (the API returns text; the bytes are UTF-8 by construction).
pub fn csv_string<H: AsRef<str>>(header: &[H], rows: impl IntoIterator<Item = Vec<Cell>>) -> Result<String, CsvError> {
    String::from_utf8(csv_bytes(header, rows)?).map_err(|_| CsvError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_reads_as_a_formula_is_defused_and_numbers_are_not() {
        let csv = csv_string(&["a", "b"], [vec![Cell::from("=HYPERLINK(\"x\")"), Cell::Number("-0.5".into())], vec![Cell::from("@SUM(A1)"), Cell::empty()]]).unwrap();
        assert_eq!(csv, "\u{feff}a,b\n\"'=HYPERLINK(\"\"x\"\")\",-0.5\n'@SUM(A1),\n");
    }
}
