//! The boundary's reading of the domain's errors. A domain module returns an error enum
//! whose variants carry what happened (a version, a status, a path); here each variant
//! becomes what every transport shows: a stable code, the UI's wording of the problem
//! and its values (`problem.<id>` in the message catalog), and hints. The `match`es are
//! exhaustive, with no catch-all arm: a new variant does not compile until it is worded.
//!
//! The English `message` is the variant's own display, so logs, the CLI and the API say
//! the same thing.

mod update;

pub use update::update;

use crate::error::ApiError;
use crate::spreadsheet::CsvError;

/// A CSV that could not be written: a bug, not the person's input.
pub fn csv(error: CsvError) -> ApiError {
    match error {
        CsvError::Writer(_) | CsvError::NotUtf8 => ApiError::internal(error.to_string()),
    }
}
