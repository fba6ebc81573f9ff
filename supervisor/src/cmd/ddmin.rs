//! Delta debugging (Zeller's ddmin) over a list: the smallest sublist that
//! still fails, found by testing halves, then complements, then finer
//! splits, until removing any single item makes the failure go away. The
//! test is `shrink`'s replay of a fault schedule; here it is any function.

/// What one test of a sublist found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The failure is still there.
    Fails,
    /// It went away (or a different one came).
    Passes,
    /// Stop searching (the budget of runs is spent, or a run broke).
    Stop,
}

/// Minimizes `items` (which fail) with `test`; a sublist keeps the items'
/// order. Each distinct sublist is tested at most once. Returns the
/// smallest failing sublist found, and whether the search finished (every
/// single item of it was tried out) rather than stopped.
pub fn ddmin<T: Clone + PartialEq>(
    items: &[T],
    mut test: impl FnMut(&[T]) -> Probe,
) -> (Vec<T>, bool) {
    let mut tried: Vec<(Vec<T>, Probe)> = Vec::new();
    let mut probe = |subset: &[T]| -> Probe {
        if let Some((_, p)) = tried.iter().find(|(s, _)| s == subset) {
            return *p;
        }
        let p = test(subset);
        tried.push((subset.to_vec(), p));
        p
    };
    let mut current = items.to_vec();
    let mut n = 2usize;
    while current.len() >= 2 {
        let chunks = split(&current, n);
        let mut next = None;
        for chunk in &chunks {
            match probe(chunk) {
                Probe::Fails => {
                    next = Some((chunk.clone(), 2));
                    break;
                }
                Probe::Stop => return (current, false),
                Probe::Passes => {}
            }
        }
        if next.is_none() && chunks.len() > 2 {
            for i in 0..chunks.len() {
                let complement: Vec<T> = chunks
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .flat_map(|(_, c)| c.iter().cloned())
                    .collect();
                match probe(&complement) {
                    Probe::Fails => {
                        next = Some((complement, (n - 1).max(2)));
                        break;
                    }
                    Probe::Stop => return (current, false),
                    Probe::Passes => {}
                }
            }
        }
        match next {
            Some((smaller, granularity)) => {
                current = smaller;
                n = granularity;
            }
            None if n >= current.len() => break,
            None => n = (2 * n).min(current.len()),
        }
    }
    if current.len() == 1 {
        match probe(&[]) {
            Probe::Fails => current.clear(),
            Probe::Stop => return (current, false),
            Probe::Passes => {}
        }
    }
    (current, true)
}

/// `items` in `n` contiguous parts of nearly equal length.
fn split<T: Clone>(items: &[T], n: usize) -> Vec<Vec<T>> {
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 0..n {
        let end = start + (items.len() - start) / (n - i);
        parts.push(items[start..end].to_vec());
        start = end;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails when every item of `cause` is in the sublist.
    fn needs(cause: &[u32]) -> impl Fn(&[u32]) -> Probe + '_ {
        move |s| match cause.iter().all(|c| s.contains(c)) {
            true => Probe::Fails,
            false => Probe::Passes,
        }
    }

    #[test]
    fn finds_the_one_cause() {
        let items: Vec<u32> = (1..=9).collect();
        assert_eq!(ddmin(&items, needs(&[6])), (vec![6], true));
    }

    #[test]
    fn finds_a_pair_apart() {
        let items: Vec<u32> = (1..=8).collect();
        assert_eq!(ddmin(&items, needs(&[2, 7])), (vec![2, 7], true));
    }

    #[test]
    fn a_failure_without_items_leaves_none() {
        assert_eq!(ddmin(&[1, 2, 3], needs(&[])), (vec![], true));
    }

    #[test]
    fn each_sublist_runs_once_and_stop_keeps_the_best() {
        let items: Vec<u32> = (1..=8).collect();
        let mut runs = Vec::new();
        let (_, finished) = ddmin(&items, |s| {
            runs.push(s.to_vec());
            needs(&[3])(s)
        });
        assert!(finished);
        let mut unique = runs.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), runs.len());
        let mut budget = 2;
        let (best, finished) = ddmin(&items, |s| {
            budget -= 1;
            match budget {
                0 => Probe::Stop,
                _ => needs(&[3])(s),
            }
        });
        assert!(!finished);
        assert_eq!(best, vec![1, 2, 3, 4]);
    }
}
