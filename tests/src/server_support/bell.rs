//! `bell`: a toolset whose `bell_wait` is answered by something outside the call — a bell the
//! test rings — for vector 29's cancelled calls. `bell_wait {"hold": true}` hides it from its
//! caller and holds that change for the call's result (the call's own consequence); the
//! ring shows `bell_wait` again and toggles `bell_answer` (shown on the first ring, hidden on
//! the second, …), with the event "The bell rang." (another's consequence).

use mcpl_protocol::mcp::{CallToolResult, Tool};
use mcpl_server::{
    CallId, Event, InstanceContext, InstanceLogic, InstanceWaker, ParticipantId, Reply, Started,
    ToolCall, Toolset,
};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

const RING: u64 = 1;

/// Where the open bell leaves its waker, for [`ring`].
pub type Slot = Arc<Mutex<Option<InstanceWaker>>>;

#[derive(Deserialize)]
struct Wait {
    #[serde(default)]
    hold: bool,
}

struct Bell {
    waiting: Option<(CallId, ParticipantId)>,
    rung: u32,
}

impl InstanceLogic for Bell {
    fn call(&mut self, call: ToolCall, cx: &mut InstanceContext) -> Reply {
        let args: Wait = match call.args() {
            Ok(a) => a,
            Err(e) => return e.into(),
        };
        if args.hold {
            cx.hide(call.caller(), "bell_wait");
            cx.hold_for(call.id());
        }
        self.waiting = Some((call.id(), call.caller()));
        Reply::Later
    }

    fn wake(&mut self, tag: u64, cx: &mut InstanceContext) {
        if tag == RING
            && let Some((call, who)) = self.waiting.take()
        {
            self.rung += 1;
            cx.event(who, Event::text("The bell rang."));
            cx.set_visible(who, "bell_answer", self.rung % 2 == 1);
            cx.show(who, "bell_wait");
            cx.answer(call, Ok(CallToolResult::text("Rung.")));
        }
    }
}

/// The toolset; its open leaves the waker in `slot`.
pub fn bell(slot: Slot) -> Toolset {
    Toolset::new("bell")
        .tool(Tool::new(
            "bell_wait",
            "Answers when the bell rings",
            json!({"type": "object"}),
        ))
        .hidden_tool(Tool::new(
            "bell_answer",
            "Shown when it rings",
            json!({"type": "object"}),
        ))
        .on_open(move |_, cx| {
            *slot.lock().unwrap() = Some(cx.waker());
            Ok(Started::new(Bell {
                waiting: None,
                rung: 0,
            }))
        })
}

/// Rings the open bell: whoever waits is answered.
pub fn ring(slot: &Slot) {
    slot.lock()
        .unwrap()
        .as_ref()
        .expect("the bell is open")
        .wake(RING);
}
