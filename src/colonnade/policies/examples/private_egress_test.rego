# Tests of private_egress.rego; `colonnade policy test src/colonnade/policies/examples` runs them.
package colonnade.private_egress_test

import rego.v1

an_egress_tool := {"name": "acme:mail:send", "side_effects": "write", "flow_labels": ["egress"]}

a_read := {"name": "acme:web:fetch", "side_effects": "read", "flow_labels": ["ingests_untrusted"]}

trifecta := {"labels": ["reads_private", "ingests_untrusted"]}

untrusted_only := {"labels": ["ingests_untrusted"]}

test_egress_after_private_and_untrusted_is_denied if {
	tool := an_egress_tool
	flow := trifecta
	count(data.colonnade.policy.deny) == 1 with input.tool as tool with input.flow as flow
}

test_egress_after_untrusted_only_is_left_to_the_approval_rule if {
	tool := an_egress_tool
	flow := untrusted_only
	count(data.colonnade.policy.deny) == 0 with input.tool as tool with input.flow as flow
}

test_a_read_is_never_denied if {
	tool := a_read
	flow := trifecta
	count(data.colonnade.policy.deny) == 0 with input.tool as tool with input.flow as flow
}
