//! A small reader of EDN, the Clojure data notation Jepsen and Porcupine
//! write histories in: enough for their operation maps (maps, vectors,
//! lists, sets, keywords, strings, integers, floats, nil, booleans,
//! symbols; tagged literals such as `#jepsen.history.Op{...}` read as the
//! tagged form; `;` comments).

use std::fmt;

/// One EDN value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Edn {
    Nil,
    Bool(bool),
    Int(i64),
    /// A float, kept as written (histories only compare values).
    Float(String),
    Str(String),
    /// A keyword without its colon: `:ok` is `Keyword("ok")`.
    Keyword(String),
    Symbol(String),
    /// A vector, list or set.
    Seq(Vec<Edn>),
    Map(Vec<(Edn, Edn)>),
}

impl Edn {
    /// The value of `:name` in a map.
    pub(crate) fn get(&self, name: &str) -> Option<&Edn> {
        let Edn::Map(entries) = self else { return None };
        entries
            .iter()
            .find(|(k, _)| matches!(k, Edn::Keyword(n) if n == name))
            .map(|(_, v)| v)
    }
}

impl fmt::Display for Edn {
    /// EDN text, except that a string shows without quotes (a value or a
    /// key of a history reads best as itself).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Edn::Nil => write!(f, "nil"),
            Edn::Bool(b) => write!(f, "{b}"),
            Edn::Int(n) => write!(f, "{n}"),
            Edn::Float(t) | Edn::Str(t) | Edn::Symbol(t) => write!(f, "{t}"),
            Edn::Keyword(k) => write!(f, ":{k}"),
            Edn::Seq(items) => {
                let shown: Vec<String> = items.iter().map(ToString::to_string).collect();
                write!(f, "[{}]", shown.join(" "))
            }
            Edn::Map(entries) => {
                let shown: Vec<String> = entries.iter().map(|(k, v)| format!("{k} {v}")).collect();
                write!(f, "{{{}}}", shown.join(", "))
            }
        }
    }
}

/// A syntax error: 1-based line and what is wrong.
#[derive(Debug)]
pub(crate) struct EdnError {
    pub(crate) line: usize,
    pub(crate) message: String,
}

/// Reads every top-level form of `text`, each with the line it starts on.
pub(crate) fn read_all(text: &str) -> Result<Vec<(usize, Edn)>, EdnError> {
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
    };
    let mut forms = Vec::new();
    loop {
        reader.skip_space();
        if reader.peek().is_none() {
            return Ok(forms);
        }
        let line = reader.line;
        forms.push((line, reader.form()?));
    }
}

struct Reader {
    chars: Vec<char>,
    at: usize,
    line: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, EdnError> {
        Err(EdnError {
            line: self.line,
            message: message.into(),
        })
    }

    /// Skips whitespace, commas and `;` comments.
    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if c == ';' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.bump();
                }
            } else if c.is_whitespace() || c == ',' {
                self.bump();
            } else {
                return;
            }
        }
    }

    fn form(&mut self) -> Result<Edn, EdnError> {
        self.skip_space();
        let Some(c) = self.peek() else {
            return self.error("unexpected end of input");
        };
        match c {
            '{' => {
                self.bump();
                let items = self.until('}')?;
                if items.len() % 2 != 0 {
                    return self.error("a map needs an even number of forms (key value ...)");
                }
                let mut entries = Vec::new();
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                Ok(Edn::Map(entries))
            }
            '[' => {
                self.bump();
                Ok(Edn::Seq(self.until(']')?))
            }
            '(' => {
                self.bump();
                Ok(Edn::Seq(self.until(')')?))
            }
            '#' => {
                self.bump();
                if self.peek() == Some('{') {
                    self.bump();
                    return Ok(Edn::Seq(self.until('}')?));
                }
                // A tagged literal: the tag is a symbol, the value follows.
                self.token();
                self.form()
            }
            '"' => self.string(),
            ':' => {
                self.bump();
                let name = self.token();
                if name.is_empty() {
                    return self.error("a keyword needs a name after ':'");
                }
                Ok(Edn::Keyword(name))
            }
            '}' | ']' | ')' => self.error(format!("unexpected '{c}'")),
            _ => self.atom(),
        }
    }

    /// Forms up to the closing `close`.
    fn until(&mut self, close: char) -> Result<Vec<Edn>, EdnError> {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                None => return self.error(format!("missing '{close}' before the end of input")),
                Some(c) if c == close => {
                    self.bump();
                    return Ok(items);
                }
                Some(_) => items.push(self.form()?),
            }
        }
    }

    /// The characters of a symbol, number or keyword name.
    fn token(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c.is_whitespace() || matches!(c, ',' | '{' | '}' | '[' | ']' | '(' | ')' | '"' | ';')
            {
                break;
            }
            out.push(c);
            self.bump();
        }
        out
    }

    fn string(&mut self) -> Result<Edn, EdnError> {
        let line = self.line;
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(EdnError {
                        line,
                        message: "unterminated string".into(),
                    })
                }
                Some('"') => return Ok(Edn::Str(out)),
                Some('\\') => match self.bump() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('r') => out.push('\r'),
                    Some(c @ ('"' | '\\')) => out.push(c),
                    Some(c) => return self.error(format!("unknown string escape '\\{c}'")),
                    None => return self.error("unterminated string"),
                },
                Some(c) => out.push(c),
            }
        }
    }

    fn atom(&mut self) -> Result<Edn, EdnError> {
        let text = self.token();
        let starts_numeric = text
            .trim_start_matches(['-', '+'])
            .starts_with(|c: char| c.is_ascii_digit());
        Ok(match text.as_str() {
            "nil" => Edn::Nil,
            "true" => Edn::Bool(true),
            "false" => Edn::Bool(false),
            _ if starts_numeric => {
                let digits = text.trim_end_matches('N');
                match digits.parse::<i64>() {
                    Ok(n) => Edn::Int(n),
                    Err(_) if text.contains(['.', 'e', 'E', 'M']) => Edn::Float(text),
                    Err(_) => return self.error(format!("bad number {text:?}")),
                }
            }
            _ => Edn::Symbol(text),
        })
    }
}
