//! Path resolution shared by all tools (spec section 0): `resolveToCwd` and `resolveReadPath`.
