//! The only `unsafe` code of the YAML layer: a safe, owned event stream over `unsafe-libyaml`
//! (libyaml 0.2.5 translated to Rust). Keeping the raw-pointer handling in this one small module
//! lets the tree builder above it stay ordinary safe Rust. docs/yaml-layer.md says why libyaml.
//!
//! Safety argument, in one place: the parser is heap-allocated and never moves after
//! `yaml_parser_initialize`; it reads from the `&'a str` it borrows for its whole life (the
//! `PhantomData` ties the lifetimes); every event is copied into owned Rust values before
//! `yaml_event_delete` frees it; the parser is deleted exactly once, in `Drop`; after a failure it
//! is never asked for another event.

use std::ffi::{CStr, c_char};
use std::marker::PhantomData;
use std::mem::MaybeUninit;

use unsafe_libyaml as unsafe_sys;

/// One parse event with owned data, as the tree builder needs it.
pub(super) enum Event {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias {
        anchor: String,
    },
    Scalar {
        value: String,
        anchor: Option<String>,
        tag: Option<String>,
        plain: bool,
    },
    SequenceStart {
        anchor: Option<String>,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<String>,
    },
    MappingEnd,
}

/// A failure reported by libyaml, positioned (0-based, as libyaml counts).
pub(super) struct Failure {
    pub message: String,
    /// 0-based line and column, when libyaml gave a mark.
    pub mark: Option<(u64, u64)>,
    /// Byte offset of the problem for reader errors (control characters), which carry no mark.
    pub offset: Option<u64>,
}

/// The event stream of one YAML text.
pub(super) struct Events<'a> {
    parser: Box<MaybeUninit<unsafe_sys::yaml_parser_t>>,
    failed: bool,
    _input: PhantomData<&'a str>,
}

impl<'a> Events<'a> {
    /// Starts a parser over `text` (UTF-8 is declared, so no encoding is guessed).
    pub(super) fn new(text: &'a str) -> Result<Self, Failure> {
        let mut parser = Box::new(MaybeUninit::<unsafe_sys::yaml_parser_t>::uninit());
        let ptr = parser.as_mut_ptr();
        // SAFETY: `ptr` points to writable memory for a parser; initialize fills all of it.
        if unsafe { unsafe_sys::yaml_parser_initialize(ptr) }.fail {
            return Err(Failure {
                message: "out of memory starting the YAML parser".to_string(),
                mark: None,
                offset: None,
            });
        }
        // SAFETY: the parser is initialized; the input pointer and length describe `text`, which
        // outlives `Self` ('a), and the boxed parser never moves.
        unsafe {
            unsafe_sys::yaml_parser_set_encoding(ptr, unsafe_sys::YAML_UTF8_ENCODING);
            unsafe_sys::yaml_parser_set_input_string(ptr, text.as_ptr(), text.len() as u64);
        }
        Ok(Events {
            parser,
            failed: false,
            _input: PhantomData,
        })
    }

    /// The next event and its start mark (0-based line and column).
    pub(super) fn next_event(&mut self) -> Result<(Event, u64, u64), Failure> {
        if self.failed {
            return Err(Failure {
                message: "parser already failed".to_string(),
                mark: None,
                offset: None,
            });
        }
        let parser = self.parser.as_mut_ptr();
        let mut raw = MaybeUninit::<unsafe_sys::yaml_event_t>::uninit();
        // SAFETY: the parser is initialized and has not failed; `raw` is writable event storage.
        if unsafe { unsafe_sys::yaml_parser_parse(parser, raw.as_mut_ptr()) }.fail {
            self.failed = true;
            // SAFETY: after a failure the parser's error fields are set; the strings are static.
            return Err(unsafe { failure(parser) });
        }
        // SAFETY: parse succeeded, so `raw` holds an initialized event that we own.
        let mut raw = unsafe { raw.assume_init() };
        // SAFETY: `raw` is a valid event; `convert` only reads it.
        let event = unsafe { convert(&raw) };
        let (line, col) = (raw.start_mark.line, raw.start_mark.column);
        // SAFETY: the event was produced by `yaml_parser_parse` and is freed exactly once.
        unsafe { unsafe_sys::yaml_event_delete(&mut raw) };
        Ok((event, line, col))
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        // SAFETY: initialized in `new` (a failed init returns no `Events`), deleted only here.
        unsafe { unsafe_sys::yaml_parser_delete(self.parser.as_mut_ptr()) };
    }
}

/// Copies a NUL-terminated libyaml string (anchor or tag); `None` for a null pointer.
///
/// # Safety
/// `ptr` is null or points to a NUL-terminated string alive for the call.
unsafe fn c_string(ptr: *const u8) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: per the contract above.
    let text = unsafe { CStr::from_ptr(ptr as *const c_char) };
    Some(text.to_string_lossy().into_owned())
}

/// Copies the data of an event.
///
/// # Safety
/// `raw` is an initialized event returned by `yaml_parser_parse` and not yet deleted.
unsafe fn convert(raw: &unsafe_sys::yaml_event_t) -> Event {
    // SAFETY (all union reads below): the variant read matches `raw.type_`, and every pointer in
    // it is owned by the event (or null where libyaml allows it).
    unsafe {
        match raw.type_ {
            unsafe_sys::YAML_STREAM_START_EVENT => Event::StreamStart,
            unsafe_sys::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
            unsafe_sys::YAML_DOCUMENT_END_EVENT => Event::DocumentEnd,
            unsafe_sys::YAML_ALIAS_EVENT => Event::Alias {
                anchor: c_string(raw.data.alias.anchor).unwrap_or_default(),
            },
            unsafe_sys::YAML_SCALAR_EVENT => {
                let scalar = raw.data.scalar;
                let bytes = match scalar.value.is_null() {
                    true => &[][..],
                    false => std::slice::from_raw_parts(scalar.value, scalar.length as usize),
                };
                let value = match std::str::from_utf8(bytes) {
                    Ok(text) => text.to_owned(),
                    Err(_) => String::from_utf8_lossy(bytes).into_owned(),
                };
                Event::Scalar {
                    value,
                    anchor: c_string(scalar.anchor),
                    tag: c_string(scalar.tag),
                    plain: scalar.style == unsafe_sys::YAML_PLAIN_SCALAR_STYLE,
                }
            }
            unsafe_sys::YAML_SEQUENCE_START_EVENT => Event::SequenceStart {
                anchor: c_string(raw.data.sequence_start.anchor),
            },
            unsafe_sys::YAML_SEQUENCE_END_EVENT => Event::SequenceEnd,
            unsafe_sys::YAML_MAPPING_START_EVENT => Event::MappingStart {
                anchor: c_string(raw.data.mapping_start.anchor),
            },
            unsafe_sys::YAML_MAPPING_END_EVENT => Event::MappingEnd,
            _ => Event::StreamEnd,
        }
    }
}

/// Reads the error fields of a failed parser.
///
/// # Safety
/// `parser` is an initialized parser whose last `yaml_parser_parse` failed.
unsafe fn failure(parser: *const unsafe_sys::yaml_parser_t) -> Failure {
    // SAFETY: per the contract; `problem` and `context` are null or static C strings.
    unsafe {
        let p = &*parser;
        let mut message =
            c_string(p.problem as *const u8).unwrap_or_else(|| "invalid YAML".to_string());
        if let Some(context) = c_string(p.context as *const u8) {
            message = format!("{message} {context}");
        }
        match p.error {
            unsafe_sys::YAML_READER_ERROR => Failure {
                message,
                mark: None,
                offset: Some(p.problem_offset),
            },
            unsafe_sys::YAML_MEMORY_ERROR => Failure {
                message: "out of memory while parsing YAML".to_string(),
                mark: None,
                offset: None,
            },
            _ => Failure {
                message,
                mark: Some((p.problem_mark.line, p.problem_mark.column)),
                offset: None,
            },
        }
    }
}
