# Tests of approval.rego; `colonnade policy test` runs them.
#
# Two limits of rego-cpp 1.5 shape them: replacing the whole input (`with input as {...}`) of
# rules that call a built-in does not compile, so each test replaces input keys one by one; and
# `with input.tool as some_rule` is silently ignored, so the value is bound to a local first.
package colonnade.policy_test

import rego.v1

a_destructive_tool := {"name": "acme:billing:void_invoice", "side_effects": "destructive", "requires_human_approval": false}

a_flagged_tool := {"name": "acme:billing:send_invoice", "side_effects": "write", "requires_human_approval": true}

a_read := {"name": "acme:billing:get_invoice", "side_effects": "read", "requires_human_approval": false}

test_a_destructive_tool_needs_approval if {
	tool := a_destructive_tool
	data.colonnade.decision.require_approval == {"acme:billing:void_invoice is destructive: a human must approve each call"} with input.tool as tool
}

test_a_tool_flagged_by_its_contract_needs_approval if {
	tool := a_flagged_tool
	count(data.colonnade.decision.require_approval) == 1 with input.tool as tool
}

test_a_read_needs_no_approval if {
	tool := a_read
	count(data.colonnade.decision.require_approval) == 0 with input.tool as tool
}

test_approval_never_denies if {
	tool := a_destructive_tool
	count(data.colonnade.decision.deny) == 0 with input.tool as tool
}
