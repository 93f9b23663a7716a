//! `grep`: Pi's grep tool (spec section 5), on the ripgrep crates instead of the rg binary.
