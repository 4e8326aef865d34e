//! Giving root up once the capture and the inputs are open: tcpdump's `-Z USER`.
//!
//! Opening a capture socket needs root; reading packets, printing them and writing files does
//! not. Run as root, tcpdump switches to the `-Z` user after opening the capture device or
//! input file and before creating any output file (which then belongs to that user); not run
//! as root, it has nothing to give up and ignores `-Z`. [`relinquish`] does the same.

/// Why root could not be given up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UserError {
    /// No such account.
    #[error("Couldn't find user '{0}'")]
    NoSuchUser(String),
    /// The password database could not be read.
    #[error("cannot look user '{user}' up")]
    Lookup {
        /// The user.
        user: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The switch itself failed.
    #[error("Couldn't change to '{user}' uid={uid} gid={gid}")]
    Switch {
        /// The user.
        user: String,
        /// Its user ID.
        uid: u32,
        /// Its group ID.
        gid: u32,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Runs as `user` from now on (its groups, group and user ID) when running as root; returns
/// whether it switched (not root: nothing to give up, as tcpdump).
pub fn relinquish(user: &str) -> Result<bool, UserError> {
    use sift_sys::user;
    if !user::is_root() {
        return Ok(false);
    }
    let account = user::lookup(user)
        .map_err(|source| UserError::Lookup { user: user.to_owned(), source })?
        .ok_or_else(|| UserError::NoSuchUser(user.to_owned()))?;
    user::switch_to(&account).map_err(|source| UserError::Switch {
        user: user.to_owned(),
        uid: account.uid,
        gid: account.gid,
        source,
    })?;
    Ok(true)
}
