//! Test support shipped in the library: the scripted model server that answers in a provider's wire format.
