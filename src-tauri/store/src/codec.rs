//! Value framing: every stored value is `[format u8][len u32 BE][crc32 u32 BE][payload]`,
//! checked on every read, so a damaged value is reported instead of returned as data.
//! The payload is the record's JSON; the format byte leaves room for another encoding.

use serde::de::DeserializeOwned;
use serde::Serialize;

const FORMAT_JSON: u8 = 1;
const HEADER_LEN: usize = 9;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodecError {
    #[error("value is {0} bytes, shorter than its header")]
    Truncated(usize),
    #[error("unknown value format {0}")]
    UnknownFormat(u8),
    #[error("value length {found} does not match its header ({expected})")]
    Length { expected: usize, found: usize },
    #[error("checksum mismatch (stored {stored:08x}, computed {computed:08x})")]
    Checksum { stored: u32, computed: u32 },
    #[error("value does not decode: {0}")]
    Decode(String),
    #[error("value does not encode: {0}")]
    Encode(String),
}

pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let payload = serde_json::to_vec(value).map_err(|e| CodecError::Encode(e.to_string()))?;
    Ok(frame(&payload))
}

pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.push(FORMAT_JSON);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload's length in a frame made by [`frame`].
pub fn payload_len(framed: &[u8]) -> usize {
    framed.len().saturating_sub(HEADER_LEN)
}

/// Checks the frame and returns the payload.
pub fn unframe(bytes: &[u8]) -> Result<&[u8], CodecError> {
    if bytes.len() < HEADER_LEN {
        return Err(CodecError::Truncated(bytes.len()));
    }
    if bytes[0] != FORMAT_JSON {
        return Err(CodecError::UnknownFormat(bytes[0]));
    }
    let expected = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize;
    let payload = &bytes[HEADER_LEN..];
    if payload.len() != expected {
        return Err(CodecError::Length { expected, found: payload.len() });
    }
    let stored = u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]);
    let computed = crc32fast::hash(payload);
    if stored != computed {
        return Err(CodecError::Checksum { stored, computed });
    }
    Ok(payload)
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    let payload = unframe(bytes)?;
    serde_json::from_slice(payload).map_err(|e| CodecError::Decode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_damage_is_detected() {
        let good = encode(&serde_json::json!({"title": "春眠不觉晓"})).unwrap();
        assert!(decode::<serde_json::Value>(&good).is_ok());
        assert_eq!(unframe(&good[..4]), Err(CodecError::Truncated(4)));
        let mut other_format = good.clone();
        other_format[0] = 9;
        assert_eq!(unframe(&other_format), Err(CodecError::UnknownFormat(9)));
        let cut = &good[..good.len() - 1];
        assert!(matches!(unframe(cut), Err(CodecError::Length { .. })));
    }

    proptest! {
        #[test]
        fn any_single_bit_flip_in_the_payload_is_caught(text in "\\PC{1,64}", bit in 0usize..512) {
            let mut bytes = encode(&text).unwrap();
            let payload_bits = (bytes.len() - HEADER_LEN) * 8;
            let bit = bit % payload_bits;
            bytes[HEADER_LEN + bit / 8] ^= 1 << (bit % 8);
            let is_checksum_error = matches!(unframe(&bytes), Err(CodecError::Checksum { .. }));
            prop_assert!(is_checksum_error);
        }

        #[test]
        fn round_trip(text in "\\PC{0,200}") {
            let bytes = encode(&text).unwrap();
            prop_assert_eq!(decode::<String>(&bytes).unwrap(), text);
        }
    }
}
