//! Pi's `truncate.ts` (spec section 6): head and tail truncation, `formatSize`, `truncateLine`.
