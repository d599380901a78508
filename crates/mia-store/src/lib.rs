//! mia-store
