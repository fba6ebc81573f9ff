//! Where two runs of one seed part ways: the first trace event that differs,
//! shown from both runs. `exec --check-determinism` compares two fresh runs;
//! `replay` compares the recorded trace with the replay's.

/// The first differing event of two traces.
#[derive(Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Its event number (from 1).
    pub event: usize,
    /// The line of the first trace ("(run ended)" if it has no more).
    pub first: String,
    /// The line of the second trace.
    pub second: String,
}

/// Compares two traces line by line; None if they are the same.
pub fn first_divergence<A, B>(a: A, b: B) -> Option<Divergence>
where
    A: IntoIterator<Item = String>,
    B: IntoIterator<Item = String>,
{
    let (mut a, mut b) = (a.into_iter(), b.into_iter());
    let ended = || "(run ended)".to_string();
    let mut event = 0;
    loop {
        event += 1;
        match (a.next(), b.next()) {
            (None, None) => return None,
            (x, y) if x == y => continue,
            (x, y) => {
                return Some(Divergence {
                    event,
                    first: x.unwrap_or_else(ended),
                    second: y.unwrap_or_else(ended),
                })
            }
        }
    }
}

impl Divergence {
    /// The three lines faultline prints, naming the runs `first` and `second`.
    pub fn print(&self, first: &str, second: &str) {
        eprintln!("faultline: first divergent event #{}:", self.event);
        eprintln!("faultline:   {first}: {}", self.first);
        eprintln!("faultline:   {second}: {}", self.second);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_the_first_differing_event_or_the_end() {
        assert_eq!(
            first_divergence(lines(&["a", "b"]), lines(&["a", "b"])),
            None
        );
        let d = first_divergence(lines(&["a", "b", "c"]), lines(&["a", "x"])).unwrap();
        assert_eq!(
            (d.event, d.first.as_str(), d.second.as_str()),
            (2, "b", "x")
        );
        let d = first_divergence(lines(&["a"]), lines(&["a", "y"])).unwrap();
        assert_eq!((d.event, d.first.as_str()), (2, "(run ended)"));
    }
}
