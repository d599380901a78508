//! mia-config
