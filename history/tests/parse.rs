//! Reading history files: the format, and errors that name line and field.

use history::{check_file, parse_history, to_json_lines, Action, HistoryError, Outcome, Verdict};

fn field_error(text: &str) -> (usize, String, String) {
    match parse_history(text) {
        Err(HistoryError::Field {
            line,
            field,
            message,
        }) => (line, field, message),
        other => panic!("expected a field error, got {other:?}"),
    }
}

const PUT: &str = r#"{"process": 1, "op": "put", "key": "k1", "value": "v1", "invoke": 10, "complete": 20, "outcome": "ok"}"#;

#[test]
fn reads_every_operation_shape() {
    let text = format!(
        "{PUT}\n\n{}\n{}\n{}\n{}\n",
        r#"{"format": 1, "process": 2, "op": "get", "key": "k1", "value": null, "invoke": 5, "complete": 6, "outcome": "ok"}"#,
        r#"{"process": 2, "op": "cas", "key": "k1", "value": {"expect": "v1", "new": "v2"}, "invoke": 30, "complete": null, "outcome": "unknown"}"#,
        r#"{"process": 3, "op": "delete", "key": "k1", "invoke": 40, "complete": 41, "outcome": "fail"}"#,
        r#"{"process": 3, "op": "get", "key": "k1", "invoke": 50, "complete": 51, "outcome": "ok"}"#,
    );
    let ops = parse_history(&text).unwrap();
    assert_eq!(ops.len(), 5);
    assert_eq!(ops[0].action, Action::Put("v1".into()));
    assert_eq!(ops[1].action, Action::Get(None));
    assert_eq!(
        ops[2].action,
        Action::Cas {
            expect: Some("v1".into()),
            new: "v2".into()
        }
    );
    assert_eq!((ops[2].complete, ops[2].outcome), (None, Outcome::Unknown));
    assert_eq!(
        (ops[3].action.clone(), ops[3].outcome),
        (Action::Delete, Outcome::Fail)
    );
    // Written back out, the history reads the same.
    assert_eq!(parse_history(&to_json_lines(&ops)).unwrap(), ops);
}

#[test]
fn malformed_lines_name_line_and_field() {
    let wrong_type = format!(
        "{PUT}\n{}",
        PUT.replace("\"invoke\": 10", "\"invoke\": \"10\"")
    );
    let (line, field, message) = field_error(&wrong_type);
    assert_eq!((line, field.as_str()), (2, "invoke"));
    assert!(message.contains("expected u64"), "{message}");

    let (line, field, _) = field_error(&format!(
        "{PUT}\n\n{}",
        PUT.replace("\"complete\"", "\"completed\"")
    ));
    assert_eq!((line, field.as_str()), (3, "completed"));

    let (_, field, message) = field_error(&PUT.replace(", \"outcome\": \"ok\"", ""));
    assert_eq!(
        (field.as_str(), message.as_str()),
        ("outcome", "missing field `outcome`")
    );

    let (_, field, _) = field_error(&PUT.replace("\"put\"", "\"increment\""));
    assert_eq!(field, "op");

    let (_, field, message) = field_error(&PUT.replace("\"v1\"", "null"));
    assert_eq!(
        (field.as_str(), message.as_str()),
        ("value", "a put needs a string value")
    );

    let (_, field, _) = field_error(&PUT.replace("\"complete\": 20", "\"complete\": 5"));
    assert_eq!(field, "complete");

    let (_, field, _) = field_error(&PUT.replace("\"complete\": 20", "\"complete\": null"));
    assert_eq!(field, "complete");

    let (_, field, message) = field_error(&PUT.replace("{", "{\"format\": 2, "));
    assert_eq!(field, "format");
    assert!(message.contains("format 2"), "{message}");

    let err = parse_history(&format!("{PUT}\n{}", &PUT[..40])).unwrap_err();
    assert!(matches!(err, HistoryError::Syntax { line: 2, .. }), "{err}");
    assert!(err.to_string().starts_with("history line 2: "), "{err}");
}

#[test]
fn check_file_reads_and_checks() {
    let dir = std::env::temp_dir().join(format!("faultline-history-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("history.jsonl");
    std::fs::write(&path, format!("{PUT}\n")).unwrap();
    assert_eq!(check_file(&path).unwrap(), Verdict::Linearizable);
    std::fs::remove_dir_all(&dir).unwrap();
    let err = check_file(&path).unwrap_err();
    assert!(matches!(err, HistoryError::Io { .. }));
    assert!(err.to_string().contains("history.jsonl"), "{err}");
}
