//! Faults of cursor-based paging, shared by every list.

use super::Fault;
use crate::cursor::CursorError;
use crate::handlers::Ctx;

/// `cursor-trimmed`: whitespace around a cursor is dropped before it is
/// read, so a cursor the server never issued (` c `) resumes where `c` does.
pub fn rewrite_cursor<'a>(ctx: &Ctx<'_>, cursor: &'a str) -> &'a str {
    if ctx.has(Fault::CursorTrimmed) {
        return cursor.trim();
    }
    cursor
}

/// `invalid-cursor-ok`: an unreadable cursor restarts the list instead of
/// being refused.
pub fn rewrite_resume(
    ctx: &Ctx<'_>,
    resumed: Result<usize, CursorError>,
) -> Result<usize, CursorError> {
    match resumed {
        Err(CursorError::Invalid) if ctx.has(Fault::InvalidCursorOk) => Ok(0),
        other => other,
    }
}

/// `cursor-duplicates`: each next page starts on the last item of the page
/// before it.
pub fn rewrite_next_offset(ctx: &Ctx<'_>, offset: usize, end: usize) -> usize {
    if ctx.has(Fault::CursorDuplicates) {
        return (end - 1).max(offset + 1);
    }
    end
}
