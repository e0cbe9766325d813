# Tests of information_flow.rego; `colonnade policy test` runs them.
package colonnade.policy_flow_test

import rego.v1

an_egress_tool := {"name": "acme:mail:send", "side_effects": "write", "requires_human_approval": false, "flow_labels": ["egress"]}

a_read := {"name": "acme:web:fetch", "side_effects": "read", "requires_human_approval": false, "flow_labels": ["ingests_untrusted"]}

untrusted := {"labels": ["ingests_untrusted"]}

clean := {"labels": ["reads_private"]}

test_egress_after_untrusted_input_needs_approval if {
	tool := an_egress_tool
	flow := untrusted
	count(data.colonnade.decision.require_approval) == 1 with input.tool as tool with input.flow as flow
}

test_egress_in_a_clean_session_runs if {
	tool := an_egress_tool
	flow := clean
	count(data.colonnade.decision.require_approval) == 0 with input.tool as tool with input.flow as flow
}

test_a_read_after_untrusted_input_runs if {
	tool := a_read
	flow := untrusted
	count(data.colonnade.decision.require_approval) == 0 with input.tool as tool with input.flow as flow
}
