//! REAPI replies: an `ActionResult` from the action cache with the blobs
//! the CAS returns for it, rebuilt into a local entry; and the `Tree` of
//! an output directory from remote execution, walked into files.

use crate::assert_one_line;

/// Input: frames of a u32 LE length and that many bytes; the first is the
/// encoded `ActionResult`, the others the blobs in the order vx asks.
pub fn reapi_action_result(data: &[u8]) {
    let frames = frames(data);
    let Some((result, blobs)) = frames.split_first() else { return };
    let blobs: Vec<Vec<u8>> = blobs.iter().map(|b| b.to_vec()).collect();
    if let Err(e) = vx::fuzzing::action_result(result, &blobs) {
        assert_one_line(&e.to_string());
    }
}

/// Input: an encoded `Tree`.
pub fn reapi_tree(data: &[u8]) {
    if let Err(e) = vx::fuzzing::tree(data) {
        assert_one_line(&e.to_string());
    }
}

/// Splits length-prefixed frames; a short last frame takes what is left.
pub fn frames(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while let Some((len, rest)) = data.split_first_chunk::<4>() {
        let len = (u32::from_le_bytes(*len) as usize).min(rest.len());
        let (frame, rest) = rest.split_at(len);
        out.push(frame);
        data = rest;
    }
    out
}
