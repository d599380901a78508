pub mod auth;
pub mod config;
pub mod doctor;
pub mod history;
pub mod run;
pub mod serve;
pub mod sessions;
pub mod snapshot;
