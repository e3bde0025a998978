//! Staging (filled in below).
