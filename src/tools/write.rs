//! `write`: Pi's write tool (spec section 2).
