//! Spreadsheets (`.xlsx`, and the old OLE/BIFF `.xls`), read with `calamine`.

use super::{not_an_export, Table, HEADER_SEARCH_ROWS, MAX_ROWS};
use crate::error::ApiError;

/// The first sheet of `workbook` that holds a cell, as text cells: a date cell as
/// `2026-03-05 20:00:00`, a number as Rust writes it (`1200`, `0.112`, never an
/// exponent), an error cell (`#N/A`) as empty. Errors: VALIDATION for an unreadable
/// sheet, an empty workbook or more than [`MAX_ROWS`] rows.
pub(super) fn spreadsheet<R: std::io::Read + std::io::Seek, W: calamine::Reader<R>>(mut workbook: W) -> Result<Table, ApiError>
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
