//! What a file is, sniffed from its bytes (never its name), and its table: text is
//! decoded and read as CSV here; spreadsheets and HTML tables have their own readers.

use calamine::Reader as _;
use serde::{Deserialize, Serialize};

use super::html::html_table;
use super::workbook::spreadsheet;
use super::{not_an_export, HEADER_SEARCH_ROWS, MAX_FILE_BYTES, MAX_ROWS};
use crate::error::ApiError;

/// What the bytes of a file are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
