//! `find`: Pi's find tool (spec section 5), on the `ignore` and `globset` crates instead of fd.
