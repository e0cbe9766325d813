//! Every golden envelope of `tests/surfaces/golden/` (what the gateway answered, recorded by its
//! own tests) reads into `CallResult` and writes back to the same JSON, and every one of
//! `golden/v1/` (envelope version 1) into `CallResultV1`. The goldens leave out what changes from
//! run to run (`call_id`, `metrics`); the test puts typical values back first.

use std::fs;
use std::path::PathBuf;

use colonnade_envelopes::{CallResult, CallResultV1};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/surfaces/golden")
}

/// Numbers compare by value (3 and 3.0 are one duration); everything else exactly.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).map_or(false, |w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Reads every golden of `dir` as `T` and writes it back; returns how many it read.
fn round_trip<T: DeserializeOwned + Serialize>(dir: PathBuf, metrics: Value) -> usize {
    let mut seen = 0;
    for entry in fs::read_dir(&dir).expect("the golden envelopes") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let original: Value = serde_json::from_str(&text).unwrap();
        let mut envelope = original.get("result").cloned().expect("a golden file holds a result");
        let fields = envelope.as_object_mut().expect("the result is an object");
        fields.entry("call_id").or_insert_with(|| Value::from("golden"));
        fields.entry("metrics").or_insert_with(|| metrics.clone());
        let typed: T = serde_json::from_value(envelope.clone())
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
        let again = serde_json::to_value(&typed).unwrap();
        assert!(same(&envelope, &again), "{}: {} != {}", path.display(), envelope, again);
        seen += 1;
    }
    seen
}

#[test]
fn golden_envelopes_round_trip() {
    let metrics = serde_json::json!({"duration_ms": 1.5, "cpu_ms": null, "memory_peak_mb": null});
    let seen = round_trip::<CallResult>(golden_dir(), metrics);
    assert!(seen >= 10, "only {} golden envelopes found", seen);
}

#[test]
fn golden_version_1_envelopes_round_trip() {
    let metrics = serde_json::json!({"duration_ms": 2, "cpu_ms": null, "memory_peak_mb": null});
    let seen = round_trip::<CallResultV1>(golden_dir().join("v1"), metrics);
    assert!(seen >= 10, "only {} version 1 golden envelopes found", seen);
}
