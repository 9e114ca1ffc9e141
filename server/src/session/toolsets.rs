//! The requests a session forwards to its principal and answers from what comes back:
//! `tools/list` (§3), `toolsets/open|close|list` (§4.2, §4.3).
//!
//! `toolsets/*` are for hosts shown hints (§2): any other gets -32601, the way a server
//! without the RFC would answer; such a host opens and closes through the compat tools
//! (§8).

use super::SessionActor;
use crate::actors::principal::{self, ReplyTo, StatementFor, ToolsView, Via};
use crate::core::requests::Settled;
use crate::core::{HostView, Statement};
use crate::paging;
use actix::prelude::*;
use mcpl_protocol::jsonrpc::{ErrorObject, Id, Request, Response};
use mcpl_protocol::mcp::{ListToolsParams, ListToolsResult};
use mcpl_protocol::meta::Meta;
use mcpl_protocol::method::{RequestMethod, ToolsetsClose, ToolsetsList, ToolsetsOpen};
use mcpl_protocol::toolsets::ToolsetsListResult;

impl SessionActor {
    /// True when a request with this id still waits for its answer (forwarded, or a tool
    /// handler running).
    pub(super) fn id_in_use(&self, id: &Id) -> bool {
        self.core.in_use(id)
    }

    /// Records a forwarded request.
    pub(super) fn forward(&mut self, id: &Id) {
        self.core.forward(id.clone());
    }

    /// Decodes `M`'s params, or answers -32602; also -32601 when this host is not shown
    /// hints.
    fn toolsets_params<M: RequestMethod>(&mut self, req: &Request) -> Option<M::Params> {
        if !self.hinted() {
            let e = ErrorObject::method_not_found(&req.method);
            self.write(Response::err(Some(req.id.clone()), e).into());
            return None;
        }
        match req.params_as::<M::Params>() {
            Ok(p) => Some(p),
            Err(e) => {
                self.write(Response::err(Some(req.id.clone()), e).into());
                None
            }
        }
    }

    pub(super) fn list_tools(&mut self, req: Request) {
        match req.params_as::<ListToolsParams>() {
            Ok(p) => {
                self.forward(&req.id);
                self.tell_principal(principal::ListTools {
                    session: self.id,
                    request: req.id,
                    cursor: p.cursor,
                });
            }
            Err(e) => self.write(Response::err(Some(req.id), e).into()),
        }
    }

    pub(super) fn toolsets_open(&mut self, req: Request) {
        if let Some(p) = self.toolsets_params::<ToolsetsOpen>(&req) {
            self.forward(&req.id);
            self.tell_principal(principal::OpenToolset {
                reply: self.reply_to(req.id),
                toolset: p.toolset,
                instance: p.instance,
                options: p.options,
            });
        }
    }

    pub(super) fn toolsets_close(&mut self, req: Request) {
        if let Some(p) = self.toolsets_params::<ToolsetsClose>(&req) {
            self.forward(&req.id);
            self.tell_principal(principal::CloseToolset {
                reply: self.reply_to(req.id),
                toolset: p.toolset,
                instance: p.instance,
            });
        }
    }

    pub(super) fn toolsets_list(&mut self, req: Request) {
        if self.toolsets_params::<ToolsetsList>(&req).is_some() {
            self.forward(&req.id);
            self.tell_principal(principal::ListToolsets {
                session: self.id,
                request: req.id,
            });
        }
    }

    fn reply_to(&self, request: Id) -> ReplyTo {
        ReplyTo {
            session: self.id,
            request,
            via: Via::Rpc,
        }
    }
}

impl Handler<ToolsView> for SessionActor {
    type Result = ();

    /// §3: every tool, with the principal's coarse visibility; `mcpl/rev` is the last rev
    /// this connection took (the list takes none), read as the list is written.
    fn handle(&mut self, m: ToolsView, _: &mut Context<Self>) {
        if self.core.settle(&m.request) != Settled::Answer {
            return;
        }
        let view = m.catalog.view_for(self.lifecycle.host_tool_hints());
        let page_size = self.shared.page_size;
        // §3: the last rev is read in the step that enqueues the list.
        self.enqueue(|w| {
            w.enqueue_at_last(|last| {
                let ListToolsResult { tools, meta, .. } =
                    m.catalog.list_tools(view, &m.visible, last);
                let response = match paging::page(tools, m.cursor.as_deref(), page_size) {
                    Ok(page) => Response::ok_typed(
                        m.request,
                        &ListToolsResult {
                            tools: page.tools,
                            next_cursor: page.next_cursor,
                            meta: meta.filter(|_| view == HostView::Hinted),
                        },
                    ),
                    Err(e) => Response::err(Some(m.request), ErrorObject::invalid_params(e)),
                };
                response.into()
            })
        });
    }
}

impl Handler<StatementFor> for SessionActor {
    type Result = ();

    /// §4.3: the full statement always takes the next rev, even when empty (vector 38).
    fn handle(&mut self, m: StatementFor, _: &mut Context<Self>) {
        if self.core.settle(&m.request) != Settled::Answer {
            return;
        }
        if !self.hinted() {
            // toolHints was withdrawn since the request was forwarded (vector 34).
            let e = ErrorObject::method_not_found(
                <ToolsetsList as mcpl_protocol::method::Method>::NAME,
            );
            return self.write(Response::err(Some(m.request), e).into());
        }
        // §5.2: held changes were stated before this statement; they take the earlier rev
        // (`write_stamped` writes them first).
        let Statement { open, ended, hints } = m.statement;
        self.write_stamped(hints, |hints| {
            let result = ToolsetsListResult {
                open,
                ended,
                meta: Meta::with_hints(hints),
            };
            Response::ok_typed(m.request, &result).into()
        });
    }
}
