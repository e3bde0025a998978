//! A Server-Sent Events parser as a pure state machine: feed it network chunks as they
//! arrive, get complete events. Lines end in `\n`, `\r\n` or `\r`; a chunk may end
//! anywhere, even inside a UTF-8 character or between `\r` and `\n`, and the events
//! are the same for every way the bytes are split (property-tested below).

/// One event: its `event:` name, if any, and its `data:` lines joined with `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line being read.
    line: Vec<u8>,
    /// The last byte was a `\r`, so a `\n` at the start of the next chunk belongs to it.
    after_cr: bool,
    event: Option<String>,
    /// The event's data so far; reused (capacity kept) from event to event.
    data: String,
    has_data: bool,
}

/// Receives each completed event: its `event:` name, if any, and its data.
pub type EventSink<'a> = dyn FnMut(Option<&str>, &str) + 'a;

impl SseParser {
    pub fn new() -> Self {
        SseParser::default()
    }

    /// Parses `bytes`, appending every event it completes to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        self.push_with(bytes, &mut |event, data| out.push(SseEvent { event: event.map(str::to_owned), data: data.to_owned() }));
    }

    /// The stream ended: a last line without its terminator, and an event without its
    /// blank line, still count (servers that close right after `data: [DONE]`).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        self.finish_with(&mut |event, data| out.push(SseEvent { event: event.map(str::to_owned), data: data.to_owned() }));
    }

    /// [`SseParser::push`] handing each event to `sink` as borrowed text: no allocation
    /// per event (the client's streaming path).
    pub fn push_with(&mut self, bytes: &[u8], sink: &mut EventSink<'_>) {
        let mut rest = bytes;
        // An empty chunk must not forget a pending `\r`: the `\n` may come next.
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some(b'\n') = rest.first() {
                rest = &rest[1..];
            }
        }
        while !rest.is_empty() {
            match memchr::memchr2(b'\n', b'\r', rest) {
                Some(end) => {
                    let terminator = rest[end];
                    if self.line.is_empty() {
                        // The whole line is in this chunk: no copy into the buffer.
                        self.take_line(&rest[..end], sink);
                    } else {
                        self.line.extend_from_slice(&rest[..end]);
                        self.end_line(sink);
                    }
                    rest = &rest[end + 1..];
                    if terminator == b'\r' {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                }
                None => {
                    self.line.extend_from_slice(rest);
                    rest = &[];
                }
            }
        }
    }

    /// [`SseParser::finish`] with a sink.
    pub fn finish_with(&mut self, sink: &mut EventSink<'_>) {
        if !self.line.is_empty() {
            self.end_line(sink);
        }
        self.dispatch(sink);
        self.after_cr = false;
    }

    fn end_line(&mut self, sink: &mut EventSink<'_>) {
        // Taken for the borrow, handed back (emptied, capacity kept) for the next line.
        let mut line = std::mem::take(&mut self.line);
        self.take_line(&line, sink);
        line.clear();
        self.line = line;
    }

    fn take_line(&mut self, line: &[u8], sink: &mut EventSink<'_>) {
        if line.is_empty() {
            self.dispatch(sink);
            return;
        }
        if line[0] == b':' {
            return; // a comment, used as a keep-alive
        }
        // Valid UTF-8 (the usual case) is checked at full speed; anything else is
        // repaired with replacement characters.
        let text = match std::str::from_utf8(line) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(line),
        };
        let (field, value) = match text.find(':') {
            Some(colon) => {
                let value = &text[colon + 1..];
                (&text[..colon], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (&text[..], ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            // Not SSE, but what llama.cpp's server writes for an error once a stream is
            // open (`error: {...}`): kept as an `error` event rather than lost.
            "error" => {
                if self.has_data {
                    self.dispatch(sink);
                }
                self.event = Some("error".to_owned());
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` only matter for reconnecting, which a completion never does.
            _ => {}
        }
    }

    fn dispatch(&mut self, sink: &mut EventSink<'_>) {
        let event = self.event.take();
        if self.has_data {
            sink(event.as_deref(), &self.data);
            self.data.clear();
            self.has_data = false;
        }
    }
}

/// Parses a whole body at once.
pub fn parse_all(bytes: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.push(bytes, &mut out);
    parser.finish(&mut out);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ev(data: &str) -> SseEvent {
        SseEvent { event: None, data: data.to_owned() }
    }

    #[test]
    fn parses_the_openai_shape() {
        let body = b"data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n";
        assert_eq!(parse_all(body), vec![ev("{\"a\":1}"), ev("{\"b\":2}"), ev("[DONE]")]);
    }

    #[test]
    fn handles_crlf_cr_comments_multiline_and_names() {
        let body = b": keep-alive\r\nevent: error\r\ndata: one\r\ndata:two\r\r\ndata: x\rdata: y\n\n";
        assert_eq!(parse_all(body), vec![SseEvent { event: Some("error".to_owned()), data: "one\ntwo".to_owned() }, ev("x\ny")]);
    }

    #[test]
    fn a_last_event_without_blank_line_counts() {
        assert_eq!(parse_all(b"data: [DONE]"), vec![ev("[DONE]")]);
        assert_eq!(parse_all(b"data: [DONE]\n"), vec![ev("[DONE]")]);
    }

    #[test]
    fn empty_data_is_an_event_but_no_data_is_not() {
        assert_eq!(parse_all(b"data:\n\nevent: x\n\n"), vec![ev("")]);
    }

    fn chunked(body: &[u8], cuts: &[usize]) -> Vec<SseEvent> {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
        cuts.sort_unstable();
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        let mut start = 0;
        for cut in cuts {
            parser.push(&body[start..cut], &mut out);
            start = cut;
        }
        parser.push(&body[start..], &mut out);
        parser.finish(&mut out);
        out
    }

    #[test]
    fn an_empty_chunk_between_cr_and_lf_changes_nothing() {
        let body = b"event: a\r\ndata: x\r\n\r\nevent: b\r\ndata: y\r\n\r\n";
        let whole = parse_all(body);
        for cut in 0..=body.len() {
            assert_eq!(chunked(body, &[cut, cut]), whole, "empty chunk at {cut}");
        }
    }

    #[test]
    fn every_single_split_point_gives_the_same_events() {
        let body = "data: {\"delta\":\"你好\"}\r\n\r\n: ping\n\ndata: a\rdata: b\r\n\rdata: [DONE]\n\n".as_bytes();
        let whole = parse_all(body);
        for cut in 0..=body.len() {
            assert_eq!(chunked(body, &[cut]), whole, "split at {cut}");
        }
        for a in 0..=body.len() {
            for b in a..=body.len() {
                assert_eq!(chunked(body, &[a, b]), whole, "split at {a} and {b}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_events(
            events in proptest::collection::vec(("[a-z]{0,3}", "[a-z{}\":你好 ]{0,12}", 0usize..3), 0..8),
            cuts in proptest::collection::vec(0usize..400, 0..12),
        ) {
            let endings = ["\n", "\r\n", "\r"];
            let mut body = String::new();
            for (name, data, ending) in &events {
                let eol = endings[*ending];
                if !name.is_empty() {
                    body.push_str(&format!("event: {name}{eol}"));
                }
                body.push_str(&format!("data: {data}{eol}{eol}"));
            }
            let whole = parse_all(body.as_bytes());
            prop_assert_eq!(whole.len(), events.len());
            prop_assert_eq!(chunked(body.as_bytes(), &cuts), whole);
        }
    }
}
