//! `restart`: the program starts again from the beginning, as `irvm dbg`'s
//! `run` starts it afresh (the modules' globals as registered, every
//! `__init` run again), keeping the breakpoints, with the launch's
//! arguments or new `inputs` and `stopOnEntry`; an attribute that would
//! need the modules loaded again (`modules`, `function`, the limits, ...)
//! is refused, naming it: a new session is the way to change those.

use serde_json::Value as Json;

use super::{Server, LAUNCH_ATTRIBUTES, LIMIT_KEYS};

/// The launch attributes a `restart` may change.
const RESTART_MAY_CHANGE: [&str; 2] = ["inputs", "stopOnEntry"];

/// The launch attributes that shape the program (the rest of
/// [`LAUNCH_ATTRIBUTES`] are the client's own, from `type` on).
fn shapes_the_program(key: &str) -> bool {
    let own = LAUNCH_ATTRIBUTES
        .iter()
        .position(|k| *k == "type")
        .map_or(LAUNCH_ATTRIBUTES, |at| &LAUNCH_ATTRIBUTES[..at]);
    own.contains(&key) || LIMIT_KEYS.iter().any(|(k, flag)| *k == key || *flag == key)
}

/// The first attribute that shapes the program whose value differs
/// between `old` and `new` (absent counts as a value), other than those
/// a restart may change.
pub fn changed_attribute(old: &Json, new: &Json) -> Option<String> {
    let empty = serde_json::Map::new();
    let old = old.as_object().unwrap_or(&empty);
    let new = new.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| shapes_the_program(k) && !RESTART_MAY_CHANGE.contains(&k.as_str()))
        .find(|k| old.get(*k) != new.get(*k))
        .cloned()
}

impl Server {
    /// Checks a `restart` and takes up its arguments (new `inputs` and
    /// `stopOnEntry`); the program is then started again by the caller.
    pub(super) fn prepare_restart(&mut self, args: &Json) -> Result<(), String> {
        // `terminate` gave up the session's waits and cancelled its
        // context for good (`Control::cancel`): a program started again
        // would be cancelled at once, and that is reported as the
        // client's doing, that is, not at all.
        if self
            .control
            .cancelled
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(
                "the program was ended by `terminate`: start a new session to run it again".into(),
            );
        }
        let s = self.session()?;
        if !s.started {
            return Err("the program has not started (send `configurationDone`)".into());
        }
        let new = match args.get("arguments") {
            None | Some(Json::Null) => None,
            Some(a) if a.is_object() => Some(a.clone()),
            Some(_) => return Err("`arguments` of `restart` must be an object".into()),
        };
        if let Some(new) = &new {
            if let Some(key) = changed_attribute(&s.launch, new) {
                return Err(format!(
                    "`restart` cannot change `{key}` (the modules would be loaded again): \
                     start a new session for that"
                ));
            }
            let inputs = super::strings_arg(new, "inputs")?;
            let values = crate::cmd_dbg::entry_inputs(&s.dbg, &inputs)?;
            let stop_on_entry = match new.get("stopOnEntry") {
                None | Some(Json::Null) => false,
                Some(Json::Bool(b)) => *b,
                Some(_) => return Err("`stopOnEntry` must be true or false".into()),
            };
            s.dbg.set_arguments(values);
            s.stop_on_entry = stop_on_entry && !s.no_debug;
            s.launch = new.clone();
        }
        s.dbg.kill();
        self.ended = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_inputs_and_stop_on_entry_may_change() {
        let old = json!({"modules": ["a.vmfb"], "function": "f", "inputs": ["1"], "name": "x"});
        let same = json!({"modules": ["a.vmfb"], "function": "f", "inputs": ["2"],
                          "stopOnEntry": true, "name": "y", "__sessionId": "z"});
        assert_eq!(changed_attribute(&old, &same), None);
        let other = json!({"modules": ["b.vmfb"], "function": "f"});
        assert_eq!(changed_attribute(&old, &other).as_deref(), Some("modules"));
        let limit = json!({"modules": ["a.vmfb"], "function": "f", "fuel": 5});
        assert_eq!(changed_attribute(&old, &limit).as_deref(), Some("fuel"));
    }
}
