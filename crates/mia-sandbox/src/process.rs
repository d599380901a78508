//! Keeping a command's processes together so they stop together, and
//! telling whether a process still runs: the Windows halves of what Unix
//! does with process groups (`killpg`) and `kill(pid, 0)`.
//!
//! A [`Job`] is a Windows job object with "kill on close": every process
//! the command starts joins it, [`Job::terminate`] stops them all, and so
//! does dropping the job (mia-code exiting included). The command is
//! assigned right after it starts, so a process it starts in its first
//! instant could escape; the command itself cannot.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::os::windows::io::RawHandle;

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_ACCESS_DENIED, FALSE, GetLastError, HANDLE, STILL_ACTIVE,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// A job object that kills its processes when terminated or dropped.
pub struct Job(HANDLE);

// SAFETY: a job handle may be used and closed from any thread.
unsafe impl Send for Job {}
// SAFETY: the handle is only passed to thread-safe kernel calls.
unsafe impl Sync for Job {}

impl Job {
    pub fn new() -> std::io::Result<Self> {
        // SAFETY: null attributes and name are allowed (an anonymous job).
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        let job = Self(handle);
        // SAFETY: a plain C struct; all-zero is a valid value.
        let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        let size = u32::try_from(std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>())
            .unwrap_or(u32::MAX);
        // SAFETY: `info` lives across the call and `size` is its size.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&raw const info).cast::<c_void>(),
                size,
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Put a started process (its handle) into the job.
    pub fn assign(&self, process: RawHandle) -> std::io::Result<()> {
        // SAFETY: both handles are valid for the duration of the call.
        let ok = unsafe { AssignProcessToJobObject(self.0, process as HANDLE) };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stop every process in the job (already stopped ones are fine).
    pub fn terminate(&self) {
        // SAFETY: the handle is valid until drop.
        unsafe {
            TerminateJobObject(self.0, 1);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: closed once; kill-on-close stops what is left.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// Does the process `pid` still run? A process we may not query (another
/// user's) counts as running.
pub fn alive(pid: u32) -> bool {
    // SAFETY: OpenProcess returns null on failure, checked below.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, pid) };
    if handle.is_null() {
        // SAFETY: reads the calling thread's last error.
        return unsafe { GetLastError() } == ERROR_ACCESS_DENIED;
    }
    let mut code: u32 = 0;
    // SAFETY: `handle` is valid and `code` outlives the call.
    let ok = unsafe { GetExitCodeProcess(handle, &raw mut code) };
    // SAFETY: opened above, closed once.
    unsafe {
        CloseHandle(handle);
    }
    ok != 0 && i64::from(code) == i64::from(STILL_ACTIVE)
}
