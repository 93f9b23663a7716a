//! `ls`: Pi's ls tool (spec section 5).
