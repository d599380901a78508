//! The fail-closed path: with the sandbox unavailable, a policy that asks
//! for one gets an error, never an unconfined command. (Its own test binary:
//! the variable is process-wide.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(unsafe_code)]

use mia_sandbox::{NetworkAccess, PolicyInputs, SandboxError, SandboxMode, SandboxPolicy};

#[test]
fn an_unavailable_sandbox_refuses_to_build_the_command() {
    // SAFETY: the only test in this binary; no other thread reads the environment yet.
    unsafe { std::env::set_var(mia_sandbox::FORCE_UNAVAILABLE_ENV, "simulated") };
    let s = mia_sandbox::support();
    assert!(!s.is_available(), "{s:?}");
    let p = SandboxPolicy::build(
        SandboxMode::WorkspaceWrite,
        NetworkAccess::Allow,
        PolicyInputs {
            project_root: std::env::temp_dir(),
            ..PolicyInputs::default()
        },
    );
    match mia_sandbox::prepare(&p, "bash", &["-c", "true"], false) {
        Err(SandboxError::Unavailable(r)) => assert!(r.contains("simulated"), "{r}"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    // Off needs no sandbox.
    assert!(mia_sandbox::prepare(&SandboxPolicy::off(), "true", &[], false).is_ok());
}
