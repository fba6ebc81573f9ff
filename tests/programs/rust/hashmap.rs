//! Iteration order of std's HashMap and HashSet with the default RandomState,
//! whose keys come from getrandom: under faultline they follow the seed.

use std::collections::{HashMap, HashSet};

fn main() {
    let map: HashMap<String, usize> = (0..16).map(|i| (format!("key{i:02}"), i)).collect();
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    println!("map {}", keys.join(" "));

    let set: HashSet<u32> = (0..16).collect();
    let members: Vec<String> = set.iter().map(u32::to_string).collect();
    println!("set {}", members.join(" "));
}
