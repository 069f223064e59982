//! Approvals over MCP: the host's [`Approver`] answered by elicitation.
//! The rule (when to ask, what a decision is bound to, how long it is
//! kept) is the host's ([`skilldeck_host::approval`]); this face only
//! asks. A client that did not declare the elicitation capability (form
//! mode), or a protocol revision that forbids server-to-client requests,
//! cannot be asked: [`Decision::Unavailable`], which the host turns into a
//! refusal (fail closed).

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};
use skilldeck_host::{ApprovalRequest, Approver, Decision};

/// Longest the server waits for the user's answer; then the call is not
/// run (as if dismissed).
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Asks the client's user through `elicitation/create` (a form with no
/// field: accept or decline).
#[derive(Debug, Clone)]
pub struct ElicitationApprover {
    peer: Peer<RoleServer>,
    runtime: Option<tokio::runtime::Handle>,
}

impl ElicitationApprover {
    /// An approver asking `peer`; made on the runtime it asks from.
    pub fn new(peer: Peer<RoleServer>) -> Self {
        ElicitationApprover {
            peer,
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }
}

impl Approver for ElicitationApprover {
    fn approve(&self, request: &ApprovalRequest) -> Decision {
        if !self
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Decision::Unavailable(
                "the MCP client did not declare the elicitation capability".to_owned(),
            );
        }
        let Some(runtime) = &self.runtime else {
            return Decision::Unavailable("no runtime to send the request on".to_owned());
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: request.message.clone(),
            requested_schema: ElicitationSchema::new(BTreeMap::new()),
        };
        let answer = runtime.block_on(
            self.peer
                .create_elicitation_with_timeout(params, Some(APPROVAL_TIMEOUT)),
        );
        match answer {
            Ok(result) => match result.action {
                ElicitationAction::Accept => Decision::Accept,
                ElicitationAction::Decline => Decision::Decline,
                // Cancel, and any action a later revision adds: not run.
                _ => Decision::Cancel,
            },
            Err(rmcp::ServiceError::Timeout { .. }) => Decision::Cancel,
            Err(e) => Decision::Unavailable(format!("the approval request failed: {e}")),
        }
    }
}
