//! A principal read back after a restart (issue #15 **\[project\]**): its links to the
//! instances that came back, and an ended record for each that did not (§4.3: every end
//! the principal did not ask for is shown, with why), so that `toolsets/list` is truthful
//! at once and a reconnecting host adopts what survived (§4.6, vector 9).

use super::InstanceLink;
use crate::author::ParticipantId;
use crate::ids::InstanceId;
use crate::store::records::{LinkRecord, REASON_LOST};
use crate::{InstanceKey, PrincipalState};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// What a principal's record comes to once read back.
pub struct ReadBack<A> {
    pub state: PrincipalState,
    pub links: BTreeMap<InstanceKey, InstanceLink<A>>,
    /// Instances it linked to that were running and did not come back, with no reason of
    /// their own.
    pub lost: Vec<u64>,
    /// Its instances of instanced toolsets no link reached (they did not survive either).
    pub lost_unlinked: usize,
}

/// Links `state`'s records of instances to those running again (`running`, by instance
/// id); ends each of the others with the reason it ended for (`ended`), or
/// [`REASON_LOST`].
pub fn read_back<A>(
    mut state: PrincipalState,
    records: Vec<LinkRecord>,
    running: impl Fn(u64) -> Option<A>,
    ended: impl Fn(u64) -> Option<String>,
    now: SystemTime,
) -> ReadBack<A> {
    let mut links = BTreeMap::new();
    let mut lost = Vec::new();
    for l in records {
        if state.instance(&l.key).is_none() {
            continue;
        }
        match running(l.instance) {
            Some(addr) => {
                let link = InstanceLink {
                    addr,
                    id: InstanceId(l.instance),
                    who: ParticipantId(l.who),
                };
                links.insert(l.key, link);
            }
            None => {
                let reason = ended(l.instance);
                if reason.is_none() {
                    lost.push(l.instance);
                }
                let _ = state.end(&l.key, reason.as_deref().unwrap_or(REASON_LOST), now);
            }
        }
    }
    // An instance the state has but no link reaches did not survive either (its actor is
    // started anew only for a default-open toolset, by the actor itself).
    let unlinked: Vec<InstanceKey> = state
        .instances()
        .map(|i| i.key().clone())
        .filter(|k| !links.contains_key(k) && state.catalog().is_instanced(&k.toolset))
        .collect();
    let lost_unlinked = unlinked.len();
    for key in unlinked {
        let _ = state.end(&key, REASON_LOST, now);
    }
    ReadBack {
        state,
        links,
        lost,
        lost_unlinked,
    }
}
