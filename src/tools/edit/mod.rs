//! `edit`: Pi's edit tool (spec section 3), with the matcher behind [`EditStrategy`].

/// How an edit call's `oldText`s are located in the file. `pi` (exact, then fuzzy) is the default.
pub trait EditStrategy: Send + Sync {
    /// The strategy's name as users select it (`pi`, `exact`, ...).
    fn name(&self) -> &'static str;
}

/// Pi's matching: exact first, then fuzzy in normalised space.
pub struct PiStrategy;

impl EditStrategy for PiStrategy {
    fn name(&self) -> &'static str {
        "pi"
    }
}
