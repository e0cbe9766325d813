//! `cargo run --example call -- 127.0.0.1:8765 acme:crm:get_customer '{"customer_id": "C-1001"}'`
//! (a bearer token in COLONNADE_TOKEN, if the gateway asks for one): prints the call's status and
//! its whole envelope as JSON.

use colonnade_envelopes::{http, CallRequest};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: call HOST:PORT TOOL_ID INPUT_JSON");
        std::process::exit(2);
    }
    let input: serde_json::Value = serde_json::from_str(&args[3]).expect("INPUT_JSON is JSON");
    let request: CallRequest = serde_json::from_value(serde_json::json!({"tool_id": args[2], "input": input}))
        .expect("a call request");
    let token = std::env::var("COLONNADE_TOKEN").ok();
    match http::call(&args[1], token.as_deref(), &request) {
        Ok(result) => {
            println!("{}", serde_json::to_string(&result.status).unwrap());
            println!("{}", serde_json::to_string(&result).unwrap());
        }
        Err(failure) => {
            eprintln!("the call failed: {failure:?}");
            std::process::exit(1);
        }
    }
}
