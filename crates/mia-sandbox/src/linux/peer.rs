//! Which program inside the sandbox opened a connection to the proxy, for
//! the ask ("`git` wants to reach github.com:443"). Best effort: the
//! connection's socket is found in the sandbox's TCP table by its port,
//! then among the descriptors of the command's processes.

use std::path::Path;

/// The inode of the socket connected from `127.0.0.1:peer_port` to the
/// proxy's port, from a `/proc/<pid>/net/tcp` table.
pub(crate) fn socket_inode(table: &str, peer_port: u16, proxy_port: u16) -> Option<u64> {
    let local = format!("0100007F:{peer_port:04X}");
    let remote = format!("0100007F:{proxy_port:04X}");
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 9 && f[1] == local && f[2] == remote {
            return f[9].parse().ok();
        }
    }
    None
}

/// The processes below `root` (its descendants, `root` included).
fn descendants(root: u32) -> Vec<u32> {
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() && out.len() < 4096 {
        let pid = out[i];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for t in tasks.flatten() {
                let children =
                    std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
                out.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
        i += 1;
    }
    out
}

fn holds(pid: u32, link: &str) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == link))
}

/// The name of the program (its executable's file name, else its `comm`)
/// in `root`'s process tree that holds the connection from `peer_port`.
pub fn program(root: u32, peer_port: u16) -> Option<String> {
    let table = std::fs::read_to_string(format!("/proc/{root}/net/tcp")).ok()?;
    let inode = socket_inode(&table, peer_port, super::netns::PROXY_PORT)?;
    let link = format!("socket:[{inode}]");
    let pid = descendants(root)
        .into_iter()
        .rev()
        .find(|p| holds(*p, &link))?;
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .and_then(|e| {
            Path::new(&e)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .or_else(|| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .ok()
                .map(|c| c.trim().to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_is_found_by_its_ports() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
           0: 0100007F:03FF 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0\n\
           1: 0100007F:A1B2 0100007F:03FF 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0 20 4 30 10 -1\n";
        assert_eq!(socket_inode(table, 0xA1B2, 1023), Some(222));
        assert_eq!(socket_inode(table, 0xA1B3, 1023), None);
    }
}
