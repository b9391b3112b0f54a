//! Random identifiers (MCP session and stream ids, lock tokens) and the hex encoding of ids,
//! keys and digests.

/// Appends `bytes` as lowercase hex: on every cached or locked call and every new id, so a
/// table lookup, not a `format!` per byte.
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
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
