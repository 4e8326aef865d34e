//! Running as another user: tcpdump's `-Z USER`.
//!
//! A capture needs root to open its socket, and nothing after that: tcpdump, run as root with
//! `-Z USER`, gives root up once the capture (or the input file) is open and before it creates
//! any output file, so that a bug in a packet printer or in the file code cannot act as root.
//! [`lookup`] finds the account, [`switch_to`] takes its groups, group and user, in the order
//! that leaves no way back (`initgroups`, `setgid`, then `setuid`).

use std::ffi::CString;
use std::io;

use crate::cvt;

/// A user account: the IDs `-Z` switches to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The name, as in the password database.
    pub name: String,
    /// The user ID.
    pub uid: u32,
    /// The primary group ID.
    pub gid: u32,
}

/// The account named `name` in the password database (`getpwnam_r`), `None` when there is none.
pub fn lookup(name: &str) -> io::Result<Option<Account>> {
    let Ok(cname) = CString::new(name) else { return Ok(None) };
    let mut buf = vec![0u8; 16 << 10];
    loop {
        // SAFETY: passwd is plain data; all-zero is a valid value.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is live for the call, `buf` is writable for its length, and the
        // strings it fills in are only read (as the name) after the call, while `buf` lives.
        let rc = unsafe {
            libc::getpwnam_r(
                cname.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            )
        };
        if rc == libc::ERANGE && buf.len() < (1 << 20) {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        if result.is_null() {
            return Ok(None);
        }
        return Ok(Some(Account { name: name.to_owned(), uid: pwd.pw_uid, gid: pwd.pw_gid }));
    }
}

/// Takes `account`'s supplementary groups, primary group and user ID, for good.
pub fn switch_to(account: &Account) -> io::Result<()> {
    let Ok(cname) = CString::new(account.name.as_str()) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    // SAFETY: `cname` is a NUL-terminated string that lives for the call.
    cvt(unsafe { libc::initgroups(cname.as_ptr(), account.gid) })?;
    // SAFETY: plain system calls on integers.
    cvt(unsafe { libc::setgid(account.gid) })?;
    // SAFETY: as above.
    cvt(unsafe { libc::setuid(account.uid) })?;
    Ok(())
}

/// Whether the process runs as root (real or effective user ID 0), the case where `-Z` acts.
pub fn is_root() -> bool {
    // SAFETY: getuid and geteuid cannot fail.
    unsafe { libc::getuid() == 0 || libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_are_found_by_name() {
        let root = lookup("root").unwrap().expect("a root account");
        assert_eq!((root.uid, root.gid), (0, 0));
        assert_eq!(lookup("no-such-user-sift").unwrap(), None);
        assert_eq!(lookup("bad\0name").unwrap(), None);
    }
}
