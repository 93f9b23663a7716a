//! `read`: Pi's read tool (spec section 1). TODO: implemented by the tools issue.
