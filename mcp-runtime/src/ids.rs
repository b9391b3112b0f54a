//! Random identifiers: MCP session and stream ids, lock tokens.

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
    b.iter().map(|x| format!("{x:02x}")).collect()
}
