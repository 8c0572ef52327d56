//! Profiles: where a program's time goes, recorded while it runs.
//!
//! A [`Profile`] is shared by everything that runs on a program's behalf:
//! the context running the bytecode ([`crate::Context::set_profile`]), the
//! host modules registered in it (through
//! [`crate::ContextResources::profile`]: the `hal` module records each
//! dispatch and the batches of workgroups its workers run), and the
//! compiling tier (each compile). It keeps
//! - a **timeline**: spans on one track per thread (invocations, host
//!   calls, waits, dispatches, workgroup batches, barriers, compiles) and
//!   counters (memory in use), at most [`ProfileOptions::max_events`];
//! - **dispatch totals** per dispatch site (executable, entry point,
//!   workgroup count, source location of the op that made it), and each
//!   track's busy time: what `--print_statistics` ranks;
//! - **samples** of the VM's call stack: a thread wakes every
//!   [`ProfileOptions::sample_every`] and raises a bit of each attached
//!   context's stop word; the interpreter answers it at its next back edge
//!   or call (compiled code hands control back there), so sampling costs
//!   what a deadline costs. Each sample weighs the time since the one
//!   before, less the host calls in between, which are timed exactly and
//!   added as leaves of their own.
//!
//! The library only records; [`Profile::data`] hands a copy to whoever
//! writes it out (the `irvm` CLI writes Chrome trace JSON, a
//! self-contained HTML page and folded stacks).
//!
//! ```
//! use irvm::profile::{Profile, ProfileOptions, SpanKind};
//!
//! let profile = Profile::new(ProfileOptions::default());
//! let start = profile.now_ns();
//! let end = profile.now_ns();
//! profile.span(SpanKind::Invocation, "main", start, end);
//! let data = profile.data();
//! assert_eq!(data.events.len(), 1);
//! assert_eq!(data.names[data.events[0].name as usize], "main");
//! ```

use rustc_hash::FxHashMap as HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use crate::stop::StopWord;

/// What a profile records.
#[derive(Clone, Debug)]
pub struct ProfileOptions {
    /// Keep every span and counter (the timeline); `false` keeps only the
    /// totals (dispatch sites, busy time, samples).
    pub timeline: bool,
    /// How often the VM's call stack is sampled (`None`: never; the
    /// contexts then run without polling for samples).
    pub sample_every: Option<Duration>,
    /// Most timeline events kept; later ones are counted in
    /// [`ProfileData::dropped_events`], not kept.
    pub max_events: usize,
}

impl Default for ProfileOptions {
    /// A timeline of at most a million events (about 50 MB), and the stack sampled
    /// every 250 µs.
    fn default() -> ProfileOptions {
        ProfileOptions {
            timeline: true,
            sample_every: Some(Duration::from_micros(250)),
            max_events: 1_000_000,
        }
    }
}

/// What a span is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// A call of an exported function from the host.
    Invocation,
    /// A call of a host module's function from bytecode.
    HostCall,
    /// A wait: a host call that waits for a fence or semaphore.
    Wait,
    /// A dispatch, from the thread that issued it until its last
    /// workgroup finished.
    Dispatch,
    /// Workgroups of one dispatch run one after another on one thread.
    Batch,
    /// The end of a dispatch on `local-task`: from the first worker left
    /// with nothing more to do until the issuing thread sees the last
    /// workgroup done.
    Barrier,
    /// A fill, copy or update of buffer bytes (the hal's transfer
    /// commands).
    Transfer,
    /// A compile of the compiling tier.
    Compile,
    /// A stack sample's span on the sampled-functions track (made by the
    /// writers from [`ProfileData::samples`], never recorded).
    Sampled,
}

impl SpanKind {
    /// The category name trace viewers group by.
    pub fn category(self) -> &'static str {
        match self {
            SpanKind::Invocation => "invocation",
            SpanKind::HostCall => "host",
            SpanKind::Wait => "wait",
            SpanKind::Dispatch => "dispatch",
            SpanKind::Batch => "workgroups",
            SpanKind::Barrier => "barrier",
            SpanKind::Transfer => "transfer",
            SpanKind::Compile => "compile",
            SpanKind::Sampled => "vm",
        }
    }
}

/// One timeline event.
#[derive(Clone, Debug)]
pub struct Event {
    /// The track (an index into [`ProfileData::tracks`]).
    pub track: u32,
    /// What it is.
    pub kind: EventKind,
    /// Its name (an index into [`ProfileData::names`]).
    pub name: u32,
    /// Start, in nanoseconds since the profile began.
    pub start_ns: u64,
    /// Duration in nanoseconds (0 for counters).
    pub dur_ns: u64,
}

/// The kind of an [`Event`] and what it carries.
#[derive(Clone, Copy, Debug)]
pub enum EventKind {
    /// A span.
    Span {
        /// What the span is.
        kind: SpanKind,
        /// The dispatch site of a dispatch, batch or barrier span.
        site: Option<u32>,
        /// Workgroups run (batches), workers that ran none (barriers),
        /// bytes (transfers), else 0.
        count: u64,
    },
    /// A counter's new value (the counter is the event's name).
    Counter {
        /// The value.
        value: u64,
    },
}

/// Where a dispatch came from: what the `hal` module records for each.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DispatchSite {
    /// The executable's name.
    pub executable: String,
    /// Its format (`vmvx-bytecode-fb`, `embedded-elf-x86_64`, ...).
    pub format: String,
    /// The entry point.
    pub entry: String,
    /// Workgroup counts x, y, z.
    pub workgroups: [u32; 3],
    /// Source location (`file:line:col`) of the op that made the dispatch,
    /// when the module that recorded it has debug information.
    pub location: Option<String>,
}

/// Totals of one dispatch site.
#[derive(Clone, Debug, Default)]
pub struct SiteTotals {
    /// Dispatches run.
    pub count: u64,
    /// Their time, from issue to the last workgroup, in nanoseconds.
    pub total_ns: u64,
}

/// A thread's track.
#[derive(Clone, Debug)]
pub struct Track {
    /// The thread's name (`main`, `irvm-hal-worker-0`, ...).
    pub name: String,
    /// Nanoseconds spent running workgroups on it.
    pub busy_ns: u64,
}

/// A function (or host call) in sampled stacks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SampledFrame {
    /// `module.function`, or `[host] module.function` for the leaf of a
    /// host call.
    pub function: String,
    /// The innermost source position of the sampled instruction
    /// (`file:line:col`), when the module has debug information.
    pub location: Option<String>,
}

/// One stack sample on the timeline.
#[derive(Clone, Copy, Debug)]
pub struct SamplePoint {
    /// The track of the thread that ran it.
    pub track: u32,
    /// The time the sample covers, in nanoseconds since the profile began.
    pub start_ns: u64,
    /// Its end.
    pub end_ns: u64,
    /// The stack (an index into [`ProfileData::stacks`]).
    pub stack: u32,
}

/// A copy of everything a profile holds ([`Profile::data`]).
#[derive(Clone, Debug, Default)]
pub struct ProfileData {
    /// Nanoseconds since the profile began, when the copy was taken.
    pub elapsed_ns: u64,
    /// One track per thread that recorded something.
    pub tracks: Vec<Track>,
    /// Event names.
    pub names: Vec<String>,
    /// The timeline, in the order recorded (empty without
    /// [`ProfileOptions::timeline`]).
    pub events: Vec<Event>,
    /// Events past [`ProfileOptions::max_events`], not kept.
    pub dropped_events: u64,
    /// [`ProfileOptions::max_events`] of the profile.
    pub max_events: usize,
    /// Dispatch sites, by id.
    pub sites: Vec<DispatchSite>,
    /// Their totals, by site id.
    pub site_totals: Vec<SiteTotals>,
    /// Frames of sampled stacks, by id.
    pub frames: Vec<SampledFrame>,
    /// Sampled stacks, outermost frame first, by id.
    pub stacks: Vec<Vec<u32>>,
    /// Each stack's total time in nanoseconds, by stack id.
    pub stack_ns: Vec<u64>,
    /// Bytecode samples on the timeline (host-call leaves are timed
    /// spans, not samples).
    pub samples: Vec<SamplePoint>,
}

/// A profile being recorded. See the [module documentation](self).
#[derive(Debug)]
pub struct Profile {
    id: u64,
    origin: Instant,
    options: ProfileOptions,
    timeline: Mutex<Timeline>,
    sites: Mutex<Sites>,
    samples: Mutex<Samples>,
    /// Stop words of the contexts sampled.
    words: Mutex<Vec<Weak<StopWord>>>,
    sampler_started: AtomicBool,
    finished: AtomicBool,
}

#[derive(Debug, Default)]
struct Timeline {
    tracks: Vec<Track>,
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
    events: Vec<Event>,
    dropped: u64,
}

#[derive(Debug, Default)]
struct Sites {
    sites: Vec<DispatchSite>,
    ids: HashMap<DispatchSite, u32>,
    totals: Vec<SiteTotals>,
}

/// Where a sampled frame is: context, module index, function ordinal,
/// bytecode offset.
pub(crate) type FrameKey = (u64, u32, u32, u32);

#[derive(Debug, Default)]
struct Samples {
    frames: Vec<SampledFrame>,
    /// Each frame's location, shared with the host calls made there.
    locations: Vec<Option<Arc<str>>>,
    frame_ids: HashMap<FrameKey, u32>,
    host_ids: HashMap<String, u32>,
    stacks: Vec<Vec<u32>>,
    stack_ids: HashMap<Vec<u32>, u32>,
    stack_ns: Vec<u64>,
    points: Vec<SamplePoint>,
    /// A host call's stack while it is looked up (kept to save an
    /// allocation per call).
    scratch: Vec<u32>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Profiles some compile may be recorded in (`any_active` is the cheap
/// test the compiling tier makes first).
static ACTIVE: Mutex<Vec<Weak<Profile>>> = Mutex::new(Vec::new());
static ANY_ACTIVE: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread's track in the profiles it recorded in: (profile id,
    /// track).
    static TRACKS: std::cell::RefCell<Vec<(u64, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Profile {
    /// A profile that starts now.
    pub fn new(options: ProfileOptions) -> Arc<Profile> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        let profile = Arc::new(Profile {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            origin: Instant::now(),
            options,
            timeline: Mutex::default(),
            sites: Mutex::default(),
            samples: Mutex::default(),
            words: Mutex::default(),
            sampler_started: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        });
        let mut active = lock(&ACTIVE);
        active.retain(|p| p.strong_count() > 0);
        active.push(Arc::downgrade(&profile));
        ANY_ACTIVE.store(true, Ordering::Relaxed);
        profile
    }

    /// What it was made with.
    pub fn options(&self) -> &ProfileOptions {
        &self.options
    }

    /// Nanoseconds since the profile began.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    /// The nanoseconds since the profile began at `at` (0 before it).
    pub fn ns_at(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.origin).as_nanos() as u64
    }

    /// The calling thread's track (made on its first event, named after
    /// the thread).
    pub fn current_track(&self) -> u32 {
        let known = TRACKS.with(|t| {
            t.borrow()
                .iter()
                .find(|(p, _)| *p == self.id)
                .map(|&(_, track)| track)
        });
        if let Some(track) = known {
            return track;
        }
        let name = std::thread::current().name().map_or_else(
            || format!("{:?}", std::thread::current().id()),
            str::to_owned,
        );
        let track = {
            let mut t = lock(&self.timeline);
            t.tracks.push(Track { name, busy_ns: 0 });
            (t.tracks.len() - 1) as u32
        };
        TRACKS.with(|t| {
            let mut t = t.borrow_mut();
            // Forget profiles that ended long ago: a thread keeps at most
            // a few.
            if t.len() >= 16 {
                t.remove(0);
            }
            t.push((self.id, track));
        });
        track
    }

    fn push(&self, t: &mut Timeline, event: Event) {
        if !self.options.timeline {
            return;
        }
        if t.events.len() >= self.options.max_events {
            t.dropped += 1;
        } else {
            t.events.push(event);
        }
    }

    fn name_id(t: &mut Timeline, name: &str) -> u32 {
        if let Some(&id) = t.name_ids.get(name) {
            return id;
        }
        let id = t.names.len() as u32;
        t.names.push(name.to_owned());
        t.name_ids.insert(name.to_owned(), id);
        id
    }

    /// Records a span named `name` of `kind` on the calling thread's track.
    pub fn span(&self, kind: SpanKind, name: &str, start_ns: u64, end_ns: u64) {
        self.span_with(kind, name, start_ns, end_ns, None, 0);
    }

    fn span_with(
        &self,
        kind: SpanKind,
        name: &str,
        start_ns: u64,
        end_ns: u64,
        site: Option<u32>,
        count: u64,
    ) {
        let track = self.current_track();
        let mut t = lock(&self.timeline);
        if kind == SpanKind::Batch {
            if let Some(tr) = t.tracks.get_mut(track as usize) {
                tr.busy_ns += end_ns.saturating_sub(start_ns);
            }
        }
        if !self.options.timeline {
            return;
        }
        let name = Profile::name_id(&mut t, name);
        self.push(
            &mut t,
            Event {
                track,
                kind: EventKind::Span { kind, site, count },
                name,
                start_ns,
                dur_ns: end_ns.saturating_sub(start_ns),
            },
        );
    }

    /// Starts the totals again (each track's busy time, each dispatch
    /// site's count and time), so that they cover what runs from now on
    /// (the timeline and samples are kept): `irvm run` calls it before the
    /// call it measures, after the modules' initializers ran.
    pub fn reset_totals(&self) {
        for t in &mut lock(&self.timeline).tracks {
            t.busy_ns = 0;
        }
        for t in &mut lock(&self.sites).totals {
            *t = SiteTotals::default();
        }
    }

    /// Records counter `name` at `value`, now, on the calling thread's
    /// track.
    pub fn counter(&self, name: &str, value: u64) {
        if !self.options.timeline {
            return;
        }
        let now = self.now_ns();
        let track = self.current_track();
        let mut t = lock(&self.timeline);
        let name = Profile::name_id(&mut t, name);
        self.push(
            &mut t,
            Event {
                track,
                kind: EventKind::Counter { value },
                name,
                start_ns: now,
                dur_ns: 0,
            },
        );
    }

    /// The id of dispatch site `site` (the same for equal sites).
    pub fn dispatch_site(&self, site: DispatchSite) -> u32 {
        let mut s = lock(&self.sites);
        if let Some(&id) = s.ids.get(&site) {
            return id;
        }
        let id = s.sites.len() as u32;
        s.sites.push(site.clone());
        s.ids.insert(site, id);
        s.totals.push(SiteTotals::default());
        id
    }

    /// Records a dispatch of `site` from `start_ns` to `end_ns` on the
    /// calling thread's track, and adds it to the site's totals.
    pub fn dispatch(&self, site: u32, start_ns: u64, end_ns: u64) {
        {
            let mut s = lock(&self.sites);
            if let Some(t) = s.totals.get_mut(site as usize) {
                t.count += 1;
                t.total_ns += end_ns.saturating_sub(start_ns);
            }
        }
        let name = self.site_entry(site);
        self.span_with(SpanKind::Dispatch, &name, start_ns, end_ns, Some(site), 0);
    }

    fn site_entry(&self, site: u32) -> String {
        lock(&self.sites)
            .sites
            .get(site as usize)
            .map_or_else(String::new, |s| s.entry.clone())
    }

    /// Records `workgroups` workgroups of `site` run one after another on
    /// the calling thread from `start_ns` to `end_ns` (its busy time).
    pub fn batch(&self, site: u32, start_ns: u64, end_ns: u64, workgroups: u64) {
        let name = self.site_entry(site);
        self.span_with(
            SpanKind::Batch,
            &name,
            start_ns,
            end_ns,
            Some(site),
            workgroups,
        );
    }

    /// Records a transfer command (`fill`, `copy`, `update`) of `bytes`
    /// bytes on the calling thread's track.
    pub fn transfer(&self, name: &str, start_ns: u64, end_ns: u64, bytes: u64) {
        self.span_with(SpanKind::Transfer, name, start_ns, end_ns, None, bytes);
    }

    /// Records the barrier at the end of a dispatch of `site`: from
    /// `start_ns`, when the first of its workers had nothing more to do,
    /// to `end_ns`, when the issuing thread saw the last workgroup done;
    /// `unused` workers ran none of its workgroups.
    pub fn barrier(&self, site: u32, start_ns: u64, end_ns: u64, unused: u64) {
        let name = self.site_entry(site);
        self.span_with(
            SpanKind::Barrier,
            &format!("barrier after {name}"),
            start_ns,
            end_ns,
            Some(site),
            unused,
        );
    }

    /// Starts sampling the stack of the context whose stop word this is
    /// (the sampling thread starts with the first).
    pub(crate) fn attach(self: &Arc<Profile>, word: &Arc<StopWord>) {
        let Some(every) = self.options.sample_every else {
            return;
        };
        {
            let mut words = lock(&self.words);
            words.retain(|w| w.strong_count() > 0);
            if !words
                .iter()
                .any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(word)))
            {
                words.push(Arc::downgrade(word));
            }
        }
        if self.sampler_started.swap(true, Ordering::Relaxed) {
            return;
        }
        let me = Arc::downgrade(self);
        let every = every.max(Duration::from_micros(10));
        let started = std::thread::Builder::new()
            .name("irvm-profile-sampler".into())
            .stack_size(64 * 1024)
            .spawn(move || loop {
                std::thread::sleep(every);
                let Some(profile) = me.upgrade() else { return };
                if profile.finished.load(Ordering::Relaxed) {
                    return;
                }
                for w in lock(&profile.words).iter() {
                    if let Some(w) = w.upgrade() {
                        w.request_sample();
                    }
                }
            });
        if started.is_err() {
            // No thread: no samples; the timeline and totals still work.
            self.sampler_started.store(false, Ordering::Relaxed);
        }
    }

    /// Stops sampling (the sampling thread ends at its next wake-up).
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Relaxed);
    }

    /// The ids of the frames at `keys`, each described by `describe` the
    /// first time it is seen; and the last one's source location.
    pub(crate) fn frame_ids(
        &self,
        keys: &[FrameKey],
        describe: impl Fn(usize) -> SampledFrame,
    ) -> (Vec<u32>, Option<Arc<str>>) {
        let mut s = lock(&self.samples);
        let mut ids = Vec::with_capacity(keys.len());
        for (k, key) in keys.iter().enumerate() {
            let id = match s.frame_ids.get(key) {
                Some(&id) => id,
                None => {
                    let id = s.frames.len() as u32;
                    let frame = describe(k);
                    s.locations.push(frame.location.as_deref().map(Arc::from));
                    s.frames.push(frame);
                    s.frame_ids.insert(*key, id);
                    id
                }
            };
            ids.push(id);
        }
        let last = ids
            .last()
            .and_then(|&id| s.locations.get(id as usize).cloned().flatten());
        (ids, last)
    }

    fn stack_id(s: &mut Samples, stack: &[u32]) -> u32 {
        if let Some(&id) = s.stack_ids.get(stack) {
            return id;
        }
        let id = s.stacks.len() as u32;
        s.stacks.push(stack.to_vec());
        s.stack_ids.insert(stack.to_vec(), id);
        s.stack_ns.push(0);
        id
    }

    /// Records a bytecode sample: `stack` (frame ids, outermost first) ran
    /// from `start_ns` to `end_ns`.
    pub(crate) fn sample(&self, stack: &[u32], start_ns: u64, end_ns: u64) {
        if stack.is_empty() || end_ns <= start_ns {
            return;
        }
        let track = self.current_track();
        let mut s = lock(&self.samples);
        let id = Profile::stack_id(&mut s, stack);
        s.stack_ns[id as usize] += end_ns - start_ns;
        if self.options.timeline && s.points.len() < self.options.max_events {
            s.points.push(SamplePoint {
                track,
                start_ns,
                end_ns,
                stack: id,
            });
        }
    }

    /// A host function's ids: its name in the timeline and its leaf frame
    /// (`[host] module.function`) in the samples ([`Profile::host_call`]).
    pub(crate) fn host_function_ids(&self, function: &str) -> (u32, u32) {
        let name = Profile::name_id(&mut lock(&self.timeline), function);
        let mut s = lock(&self.samples);
        let leaf = match s.host_ids.get(function) {
            Some(&id) => id,
            None => {
                let id = s.frames.len() as u32;
                s.frames.push(SampledFrame {
                    function: format!("[host] {function}"),
                    location: None,
                });
                s.locations.push(None);
                s.host_ids.insert(function.to_owned(), id);
                id
            }
        };
        (name, leaf)
    }

    /// Records a host call of the function with `ids`
    /// ([`Profile::host_function_ids`]) made under `stack`, from
    /// `start_ns` to `end_ns`: a span of `kind` on the calling thread's
    /// track, and its time under the stack with the call as the leaf.
    pub(crate) fn host_call(
        &self,
        kind: SpanKind,
        (name, leaf): (u32, u32),
        stack: &[u32],
        start_ns: u64,
        end_ns: u64,
    ) {
        if self.options.timeline {
            let track = self.current_track();
            let mut t = lock(&self.timeline);
            self.push(
                &mut t,
                Event {
                    track,
                    kind: EventKind::Span {
                        kind,
                        site: None,
                        count: 0,
                    },
                    name,
                    start_ns,
                    dur_ns: end_ns.saturating_sub(start_ns),
                },
            );
        }
        let mut s = lock(&self.samples);
        let mut full = std::mem::take(&mut s.scratch);
        full.clear();
        full.extend_from_slice(stack);
        full.push(leaf);
        let id = Profile::stack_id(&mut s, &full);
        s.scratch = full;
        s.stack_ns[id as usize] += end_ns.saturating_sub(start_ns);
    }

    /// A copy of everything recorded so far.
    pub fn data(&self) -> ProfileData {
        let elapsed_ns = self.now_ns();
        let t = lock(&self.timeline);
        let sites = lock(&self.sites);
        let s = lock(&self.samples);
        ProfileData {
            elapsed_ns,
            tracks: t.tracks.clone(),
            names: t.names.clone(),
            events: t.events.clone(),
            dropped_events: t.dropped,
            max_events: self.options.max_events,
            sites: sites.sites.clone(),
            site_totals: sites.totals.clone(),
            frames: s.frames.clone(),
            stacks: s.stacks.clone(),
            stack_ns: s.stack_ns.clone(),
            samples: s.points.clone(),
        }
    }
}

/// Records a compile of the compiling tier (`what` names the function)
/// in every profile alive.
#[cfg(feature = "jit")]
pub(crate) fn compile_event(what: &str, start: Instant, end: Instant) {
    if !ANY_ACTIVE.load(Ordering::Relaxed) {
        return;
    }
    let profiles: Vec<Arc<Profile>> = {
        let mut active = lock(&ACTIVE);
        active.retain(|p| p.strong_count() > 0);
        if active.is_empty() {
            ANY_ACTIVE.store(false, Ordering::Relaxed);
        }
        active.iter().filter_map(Weak::upgrade).collect()
    };
    for p in profiles {
        if !p.finished.load(Ordering::Relaxed) {
            p.span(SpanKind::Compile, what, p.ns_at(start), p.ns_at(end));
        }
    }
}

/// Whether a profile is alive (a compile happening now may be recorded
/// somewhere; calls in compiled code are left to the interpreter).
pub(crate) fn any_active() -> bool {
    ANY_ACTIVE.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_are_per_thread_and_named_after_it() {
        let p = Profile::new(ProfileOptions::default());
        p.span(SpanKind::HostCall, "a", 1, 2);
        let q = p.clone();
        std::thread::Builder::new()
            .name("worker-x".into())
            .spawn(move || q.span(SpanKind::Batch, "b", 3, 7))
            .unwrap()
            .join()
            .unwrap();
        let d = p.data();
        assert_eq!(d.tracks.len(), 2);
        assert_eq!(d.tracks[1].name, "worker-x");
        assert_eq!(d.tracks[1].busy_ns, 4);
        assert_eq!(d.tracks[0].busy_ns, 0);
        assert_eq!(d.events[1].track, 1);
    }

    #[test]
    fn dispatch_totals_add_up_per_site() {
        let p = Profile::new(ProfileOptions {
            timeline: false,
            ..ProfileOptions::default()
        });
        let site = |entry: &str| DispatchSite {
            executable: "e".into(),
            format: "f".into(),
            entry: entry.into(),
            workgroups: [1, 1, 1],
            location: None,
        };
        let a = p.dispatch_site(site("a"));
        let b = p.dispatch_site(site("b"));
        assert_eq!(p.dispatch_site(site("a")), a);
        p.dispatch(a, 0, 10);
        p.dispatch(a, 20, 25);
        p.dispatch(b, 0, 3);
        let d = p.data();
        assert!(d.events.is_empty(), "no timeline was asked for");
        assert_eq!(d.site_totals[a as usize].count, 2);
        assert_eq!(d.site_totals[a as usize].total_ns, 15);
        assert_eq!(d.site_totals[b as usize].total_ns, 3);
    }

    #[test]
    fn events_past_the_limit_are_counted_not_kept() {
        let p = Profile::new(ProfileOptions {
            max_events: 2,
            ..ProfileOptions::default()
        });
        for i in 0..5 {
            p.span(SpanKind::HostCall, "x", i, i + 1);
        }
        let d = p.data();
        assert_eq!(d.events.len(), 2);
        assert_eq!(d.dropped_events, 3);
    }

    #[test]
    fn samples_share_stacks_and_host_leaves() {
        let p = Profile::new(ProfileOptions::default());
        let (ids, loc) = p.frame_ids(&[(0, 0, 0, 0)], |_| SampledFrame {
            function: "m.f".into(),
            location: Some("a.mlir:1:1".into()),
        });
        let f = ids[0];
        assert_eq!(loc.as_deref(), Some("a.mlir:1:1"));
        let (again, _) = p.frame_ids(&[(0, 0, 0, 0)], |_| unreachable!("described once"));
        assert_eq!(f, again[0]);
        p.sample(&[f], 0, 100);
        p.sample(&[f], 100, 150);
        let ids = p.host_function_ids("hal.fence.await");
        p.host_call(SpanKind::Wait, ids, &[f], 200, 270);
        let d = p.data();
        assert_eq!(d.stacks.len(), 2);
        assert_eq!(d.stack_ns[0], 150);
        assert_eq!(d.stack_ns[1], 70);
        assert_eq!(
            d.frames[d.stacks[1][1] as usize].function,
            "[host] hal.fence.await"
        );
        assert_eq!(d.samples.len(), 2);
    }
}
