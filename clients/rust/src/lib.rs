//! The Colonnade gateway's call envelopes as serde types, generated from its JSON Schemas
//! (`generate_types.py`; `src/generated.rs` is never edited by hand), and one call over REST.
//!
//! ```
//! let result: colonnade_envelopes::CallResult = serde_json::from_str(r#"{
//!   "envelope_version": 2, "call_id": "c1", "status": "success", "output": {"id": 7},
//!   "error": null, "side_effects": [], "metrics": {"duration_ms": 3.5, "cpu_ms": null,
//!   "memory_peak_mb": null}, "provenance": null, "warnings": [], "commit_token": null, "pending": null
//! }"#).unwrap();
//! assert_eq!(result.status, colonnade_envelopes::CallStatus::Success);
//! ```

mod generated;
pub mod http;

pub use generated::*;
