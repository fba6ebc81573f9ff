//! Reading the `key value...` lines the test programs print.

use std::fmt::Debug;
use std::str::FromStr;

/// The whitespace-separated words after `key` on the first line of `text`
/// whose first word is `key`. Panics (showing `text`) if there is none.
#[track_caller]
pub fn words<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.first() == Some(&key))
        .map(|w| w[1..].to_vec())
        .unwrap_or_else(|| panic!("no line starting with {key:?} in output:\n{text}"))
}

/// The first word after `key` (see [`words`]), parsed.
#[track_caller]
pub fn value<T: FromStr>(text: &str, key: &str) -> T
where
    T::Err: Debug,
{
    word_after(text, key, key)
}

/// On the line starting with `key`, the word following the word `label`
/// (which may be `key` itself), parsed. For `after monotonic 1.5 realtime 1.5`,
/// `word_after(text, "after", "realtime")` is 1.5.
#[track_caller]
pub fn word_after<T: FromStr>(text: &str, key: &str, label: &str) -> T
where
    T::Err: Debug,
{
    let line = words(text, key);
    let word = if label == key {
        line.first()
    } else {
        line.iter()
            .position(|w| *w == label)
            .and_then(|i| line.get(i + 1))
    };
    let word =
        word.unwrap_or_else(|| panic!("no word after {label:?} on the {key:?} line of:\n{text}"));
    word.parse().unwrap_or_else(|e| {
        panic!("cannot parse {word:?} after {label:?} on the {key:?} line ({e:?}) of:\n{text}")
    })
}

/// A `seconds.fraction` reading as whole seconds (no float rounding).
#[track_caller]
pub fn whole_seconds(reading: &str) -> i64 {
    let whole = reading.split('.').next().unwrap_or(reading);
    whole
        .parse()
        .unwrap_or_else(|e| panic!("not a seconds reading: {reading:?} ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "realtime 1735689600.000000123\nafter monotonic 1.5 realtime 2.5\n";

    #[test]
    fn reads_words_and_values() {
        assert_eq!(
            words(TEXT, "after"),
            ["monotonic", "1.5", "realtime", "2.5"]
        );
        assert_eq!(value::<String>(TEXT, "realtime"), "1735689600.000000123");
        assert_eq!(word_after::<f64>(TEXT, "after", "realtime"), 2.5);
        assert_eq!(whole_seconds("1735689600.000000123"), 1_735_689_600);
    }

    #[test]
    #[should_panic(expected = "no line starting with")]
    fn missing_key_panics() {
        words(TEXT, "boottime");
    }
}
