//! Replicas agree: after the faults, every member holds the same data.

use std::collections::BTreeMap;

use etcd_client::GetOptions;

/// One member's view: its revision and every key with its value.
type View = (i64, BTreeMap<String, String>);

/// What `endpoint` holds, read from its own state (serializable).
async fn view(endpoint: String) -> Option<View> {
    let options = GetOptions::new().with_all_keys().with_serializable();
    let resp = crate::on_member(
        &endpoint,
        |mut c| async move { c.get("", Some(options)).await },
    )
    .await?;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let kvs = resp
        .kvs()
        .iter()
        .map(|kv| (text(kv.key()), text(kv.value())));
    Some((resp.header()?.revision(), kvs.collect()))
}

/// True once every member answers with the same view, looking up to
/// `attempts` times 200 ms apart; otherwise false, with the last views and
/// the keys on which they differ.
pub async fn check(endpoints: &[String], attempts: u32) -> bool {
    let mut views = Vec::new();
    for attempt in 1..=attempts {
        views = crate::ask_all(endpoints, view).await;
        let summary: Vec<String> = views
            .iter()
            .map(|(ep, v)| match v {
                Some((rev, kvs)) => format!("{ep} revision {rev}, {} key(s)", kvs.len()),
                None => format!("{ep} no answer"),
            })
            .collect();
        println!("attempt {attempt}: {}", summary.join("; "));
        let first = &views[0].1;
        if first.is_some() && views.iter().all(|(_, v)| v == first) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    println!("replicas disagree after {attempts} attempts");
    for line in differences(&views) {
        println!("  {line}");
    }
    false
}

/// The keys whose values differ between the members that answered, one
/// line each: `k1: http://n1:2379="v0-3" http://n2:2379=(none)`.
fn differences(views: &[(String, Option<View>)]) -> Vec<String> {
    let answered: Vec<(&String, &BTreeMap<String, String>)> = views
        .iter()
        .filter_map(|(ep, v)| v.as_ref().map(|(_, kvs)| (ep, kvs)))
        .collect();
    let keys: std::collections::BTreeSet<&String> =
        answered.iter().flat_map(|(_, kvs)| kvs.keys()).collect();
    keys.into_iter()
        .filter(|k| {
            answered
                .windows(2)
                .any(|w| w[0].1.get(*k) != w[1].1.get(*k))
        })
        .map(|k| {
            let values: Vec<String> = answered
                .iter()
                .map(|(ep, kvs)| match kvs.get(k) {
                    Some(v) => format!("{ep}={v:?}"),
                    None => format!("{ep}=(none)"),
                })
                .collect();
            format!("{k}: {}", values.join(" "))
        })
        .collect()
}
