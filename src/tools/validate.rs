//! Argument coercion and validation as pi-ai's `validateToolArguments` does it (spec section 7).
