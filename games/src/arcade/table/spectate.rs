//! The game as spectators see it (issue #43): after every step of the table — an open, a
//! call, a join, a close, a wake, a decline, a resumption — its [`GameView`] goes to the
//! arcade's gallery, which sends it to the spectator page only when it changed.

use super::{Seat, Side, Table};
use crate::arcade::rules::Rules;
use crate::arcade::spectate::{GameState, GameView, PlayerView};
use mcpl_server::{InstanceContext, ParticipantKind};

impl<R: Rules> Table<R> {
    /// Shows the game as it is now in the arcade's gallery (spectators, resources); a challenge that ended
    /// before it started (declined, withdrawn) is not shown.
    pub(super) fn publish(&self, cx: &InstanceContext) {
        let Some(gallery) = self.shared.gallery() else {
            return;
        };
        let outcome = self.outcome();
        if cx.has_ended() && outcome.is_none() {
            gallery.remove(self.number);
            return;
        }
        let result = outcome.map(|o| self.reason(&o, cx));
        let state = match (&result, self.started) {
            (Some(result), _) => GameState::Over {
                result: result.clone(),
            },
            (None, false) => GameState::Waiting {
                invited: [Side::First, Side::Second]
                    .into_iter()
                    .find(|s| {
                        cx.participant(self.seat(*s).id)
                            .is_some_and(|p| matches!(p.kind(), ParticipantKind::Invited(_)))
                    })
                    .unwrap_or(Side::Second)
                    .index(),
            },
            (None, true) => GameState::Playing {
                to_move: self.rules.to_move().index(),
                thinking: self.thinking.is_some(),
            },
        };
        let spectacle = self.rules.spectacle(result.as_deref());
        let player = |side: Side| {
            let Seat { id, bot } = self.seat(side);
            PlayerView {
                name: cx.name(id),
                side: R::side_name(side).to_owned(),
                bot,
            }
        };
        gallery.publish(GameView {
            id: self.number,
            game: R::TOOLS.toolset.to_owned(),
            title: self.rules.title(),
            players: [player(Side::First), player(Side::Second)],
            state,
            moves: self.moves,
            last_move: spectacle.last_move,
            captures: spectacle.captures,
            score: spectacle.score,
            svg: spectacle.svg,
        });
    }

    /// The table goes away: a game that did not end is no longer shown (one that ended
    /// stays among the finished).
    pub(super) fn unpublish(&self) {
        if let Some(gallery) = self.shared.gallery()
            && self.outcome().is_none()
        {
            gallery.remove(self.number);
        }
    }
}
