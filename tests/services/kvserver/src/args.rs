//! `--flag value` command-line parsing. Both binaries take a handful of
//! flags that all carry a value, which does not justify a dependency.

use std::collections::HashMap;

/// Parsed `--flag value` pairs.
#[derive(Debug)]
pub struct Flags {
    values: HashMap<String, String>,
}

impl Flags {
    /// Parses `args` (without the program name). Every flag must be one of
    /// `known` and be followed by a value; a repeated flag keeps its last value.
    pub fn parse(args: impl IntoIterator<Item = String>, known: &[&str]) -> Result<Flags, String> {
        let mut values = HashMap::new();
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if !known.contains(&flag.as_str()) {
                return Err(format!("unknown argument {flag:?}"));
            }
            let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
            values.insert(flag, value);
        }
        Ok(Flags { values })
    }

    /// The value of `flag`, if given.
    pub fn get(&self, flag: &str) -> Option<&str> {
        self.values.get(flag).map(String::as_str)
    }

    /// The value of `flag`, or an error naming it.
    pub fn required(&self, flag: &str) -> Result<&str, String> {
        self.get(flag).ok_or_else(|| format!("missing {flag}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Flags, String> {
        Flags::parse(args.iter().map(|a| a.to_string()), &["--a", "--b"])
    }

    #[test]
    fn flags_with_values() {
        let flags = parse(&["--a", "1", "--b", "x"]).unwrap();
        assert_eq!(flags.get("--a"), Some("1"));
        assert_eq!(flags.required("--b"), Ok("x"));
    }

    #[test]
    fn unknown_missing_and_valueless_flags_are_errors() {
        assert!(parse(&["--c", "1"]).is_err());
        assert!(parse(&["--a"]).is_err());
        assert_eq!(
            parse(&[]).unwrap().required("--a"),
            Err("missing --a".into())
        );
    }
}
