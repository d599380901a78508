use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Milliseconds since the Unix epoch, the unit of every timestamp in mia-code.
pub fn now_ms() -> i64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// An id string that could not be parsed.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{value}` is not a valid {kind} id (expected a UUID such as 0193b4d2-7c1e-7a51-9f0e-2c4b5d6e7f80)"
)]
pub struct IdParseError {
    pub kind: &'static str,
    pub value: String,
}

macro_rules! id_type {
    ($name:ident, $kind:literal) => {
        /// A time-ordered identifier (UUID v7): ids sort in creation order.
        #[derive(
            Clone,
            Copy,
            PartialEq,
            Eq,
            PartialOrd,
            Ord,
            Hash,
            Serialize,
            Deserialize,
            schemars::JsonSchema,
        )]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A fresh id, ordered after every id made before it in this process.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }

            pub fn as_uuid(&self) -> &Uuid {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0.hyphenated())
            }
        }

        impl FromStr for $name {
            type Err = IdParseError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s.trim())
                    .map(Self)
                    .map_err(|_| IdParseError {
                        kind: $kind,
                        value: s.to_string(),
                    })
            }
        }
    };
}

id_type!(SessionId, "session");
id_type!(MessageId, "message");
id_type!(PartId, "part");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_creation_time() {
        let ids: Vec<SessionId> = (0..200).map(|_| SessionId::new()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
        let strings: Vec<String> = ids.iter().map(ToString::to_string).collect();
        let mut sorted_strings = strings.clone();
        sorted_strings.sort();
        assert_eq!(strings, sorted_strings, "text form sorts the same way");
    }

    #[test]
    fn parse_round_trip_and_error() {
        let id = MessageId::new();
        let back: MessageId = id.to_string().parse().unwrap();
        assert_eq!(id, back);
        let err = "nope".parse::<MessageId>().unwrap_err();
        assert!(err.to_string().contains("not a valid message id"), "{err}");
    }
}
