//! The keys that say which server a scenario runs on (`isolation`,
//! `handshake`, `hands_on`, `reused_in_eras`, `reuse_group`,
//! `ends_server`, `confirm_fresh`), and the checks that hold each scenario
//! to what its kind of server allows.

use serde_json::{Map, Value};

use super::Loader;
use crate::scenario::generate::Generate;
use crate::scenario::model::{Isolation, Step};

/// The isolation keys of one scenario, as loaded.
pub(super) struct IsolationKeys {
    pub isolation: Isolation,
    pub handshake: bool,
    pub hands_on: bool,
    pub reused_in_eras: Vec<String>,
    pub reuse_group: Option<String>,
    pub ends_server: bool,
    pub confirm_fresh: bool,
}

impl Loader<'_> {
    /// Reads the isolation keys and checks the steps against them.
    pub(super) fn isolation_keys(
        &mut self,
        root: &Map<String, Value>,
        built: &[Step],
        cleanup: &[Step],
        generate: Option<&Generate>,
    ) -> IsolationKeys {
        let isolation = self.isolation(root);
        let handshake = self.flag(root, "", "handshake", true);
        if !handshake && isolation != Isolation::Fresh {
            self.error(
            "/handshake",
            "handshake: false needs a fresh connection (isolation: fresh): a warm one had its handshake",
        );
        }
        let ends_server = self.flag(root, "", "ends_server", false);
        if ends_server && isolation != Isolation::Reused {
            self.error(
                "/ends_server",
                "ends_server: true is for isolation: reused (a fresh scenario's server is stopped after it anyway; a shared one must stay as it was)",
            );
        }
        match isolation {
            Isolation::Shared => {
                self.check_shareable(built, cleanup);
                if let Some(g) = generate {
                    self.check_shareable(&g.steps, &[]);
                }
            }
            Isolation::Reused => {
                let remedy = "use isolation: fresh";
                self.check_reusable_steps([built, cleanup], generate, ends_server, remedy);
            }
            Isolation::Fresh => {}
        }
        let hands_on = self.flag(root, "", "hands_on", false);
        if hands_on {
            self.check_hands_on(isolation, built, cleanup, generate.is_some());
        }
        let reused_in_eras = self.strings(root, "", "reused_in_eras");
        if !reused_in_eras.is_empty() {
            self.check_reused_in_eras(isolation, &reused_in_eras);
            if isolation == Isolation::Fresh && !hands_on {
                let remedy = "leave the era out of reused_in_eras";
                self.check_reusable_steps([built, cleanup], generate, false, remedy);
            }
        }
        let reuse_group = self.text(root, "", "reuse_group");
        if reuse_group.is_some() && isolation != Isolation::Reused {
            self.error(
            "/reuse_group",
            "reuse_group is for isolation: reused (it names the scenarios a reused server is handed on between)",
        );
        }
        let confirm_fresh = self.flag(root, "", "confirm_fresh", false);
        if confirm_fresh && (isolation != Isolation::Reused || ends_server) {
            self.error(
                "/confirm_fresh",
                "confirm_fresh: true is for isolation: reused scenarios that hand their server on (a fresh one has a server of its own already; a shared one only reads)",
            );
        }
        IsolationKeys {
            isolation,
            handshake,
            hands_on,
            reused_in_eras,
            reuse_group,
            ends_server,
            confirm_fresh,
        }
    }

    /// `reused_in_eras` names eras in which a `fresh` scenario needs no
    /// server of its own (what made it fresh belongs to another era, such
    /// as per-session state the stateless era does not have). Its steps are
    /// then held to what a `reused` scenario may do: a `hands_on` one's are
    /// already, any other's are checked by the caller.
    fn check_reused_in_eras(&mut self, isolation: Isolation, eras: &[String]) {
        if isolation != Isolation::Fresh {
            self.error(
                "/reused_in_eras",
                "reused_in_eras is for isolation: fresh scenarios (a shared or reused one needs no server of its own in any era)",
            );
        }
        for (i, era) in eras.iter().enumerate() {
            if !crate::protocol::KNOWN_VERSIONS.contains(&era.as_str()) {
                let known = crate::protocol::KNOWN_VERSIONS.join(", ");
                self.error(
                    &format!("/reused_in_eras/{i}"),
                    format!("reused_in_eras names '{era}', not a protocol version this harness knows ({known})"),
                );
            }
        }
    }

    /// `isolation: shared` only on scenarios whose every step leaves the
    /// server as it found it.
    fn check_shareable(&mut self, steps: &[Step], cleanup: &[Step]) {
        if !cleanup.is_empty() {
            self.error(
                "/isolation",
                "isolation: shared, but the scenario has cleanup steps (it changes the server)",
            );
        }
        for (i, step) in steps.iter().enumerate() {
            if let Some(why) = step.shares_badly() {
                self.error_at(
                    step.place.position,
                    format!(
                        "isolation: shared, but step {} {why}; use isolation: fresh",
                        i + 1
                    ),
                );
            }
        }
    }

    /// [`Self::check_reusable`] on every step: the main ones, the cleanup
    /// and the generated cases'.
    fn check_reusable_steps(
        &mut self,
        [built, cleanup]: [&[Step]; 2],
        generate: Option<&Generate>,
        ends_server: bool,
        remedy: &str,
    ) {
        let generated = generate.map_or(&[][..], |g| &g.steps[..]);
        for step in built.iter().chain(cleanup).chain(generated) {
            self.check_reusable(step, ends_server, remedy);
        }
    }

    /// A reused scenario takes no step that would sway the scenarios its
    /// server serves next; one that `ends_server` has none after it, so it
    /// may change the catalog (its server, stopped, takes the change along).
    fn check_reusable(&mut self, step: &Step, ends_server: bool, remedy: &str) {
        let why = step
            .reuses_badly()
            .filter(|_| !(ends_server && step.is_control_hook()));
        if let Some(why) = why {
            self.error_at(
                step.place.position,
                format!("isolation: reused, but the step {why}; {remedy}"),
            );
        }
    }

    /// `hands_on: true` only where the server a scenario leaves is one a
    /// `reused` scenario could have left: a fresh scenario that generates
    /// no cases, and whose steps a `reused` scenario could take. One whose
    /// main session opens without the handshake (`handshake: false`) hands
    /// its server on only after its own initialize settled on the era, the
    /// harness then sending what the handshake would have
    /// (`Session::complete_lifecycle`).
    fn check_hands_on(
        &mut self,
        isolation: Isolation,
        steps: &[Step],
        cleanup: &[Step],
        generates: bool,
    ) {
        let why = if isolation != Isolation::Fresh {
            Some("hands_on: true is for isolation: fresh (other scenarios' servers serve on already)")
        } else if generates {
            Some("hands_on: true is not for generated cases: each case may leave its server differently")
        } else {
            None
        };
        if let Some(why) = why {
            self.error("/hands_on", why);
            return;
        }
        for step in steps.iter().chain(cleanup) {
            let why = step
                .reuses_badly()
                .or((!step.handshake).then_some("opens a session without the handshake"));
            if let Some(why) = why {
                self.error_at(
                    step.place.position,
                    format!(
                        "hands_on: true, but the step {why}; a reused scenario could not take it"
                    ),
                );
            }
        }
    }

    fn isolation(&mut self, root: &Map<String, Value>) -> Isolation {
        match self.text(root, "", "isolation").as_deref() {
            None | Some("fresh") => Isolation::Fresh,
            Some("shared") => Isolation::Shared,
            Some("reused") => Isolation::Reused,
            Some(other) => {
                self.error(
                    "/isolation",
                    format!("isolation is fresh, shared or reused, not '{other}'"),
                );
                Isolation::Fresh
            }
        }
    }
}
