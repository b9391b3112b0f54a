//! Random identifiers (MCP session and stream ids, lock tokens) and the hex encoding of ids,
//! keys and digests.

/// Appends `bytes` as lowercase hex: on every cached or locked call and every new id, so a
/// table lookup, not a `format!` per byte.
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    // Through a stack buffer, 32 bytes at a time: one `push_str` of checked ASCII instead of
    // a `push` (with its UTF-8 encoding) per digit.
    let mut buf = [0u8; 64];
    for chunk in bytes.chunks(32) {
        for (pair, b) in buf.chunks_exact_mut(2).zip(chunk) {
            pair[0] = HEX[usize::from(b >> 4)];
            pair[1] = HEX[usize::from(b & 15)];
        }
        if let Ok(digits) = std::str::from_utf8(&buf[..chunk.len() * 2]) {
            out.push_str(digits);
        }
    }
}

/// A secure random id (128 bits, hex): visible ASCII as the transport requires.
pub fn random_id() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No OS randomness: fall back to a time- and counter-based id (still unique per process).
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        b[..16].copy_from_slice(&t.as_nanos().to_le_bytes());
    }
    let mut id = String::with_capacity(32);
    push_hex(&mut id, &b);
    id
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_two_lowercase_digits_a_byte_at_any_length() {
        for len in [0, 1, 16, 31, 32, 33, 64, 100] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 5) as u8).collect();
            let mut out = String::from("x:");
            super::push_hex(&mut out, &bytes);
            let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(out, format!("x:{expected}"), "{len}");
        }
    }
}
