# Tests of approval.rego; `colonnade policy test` runs them.
# rego-cpp cannot replace the whole input of a rule that calls a built-in (`with input as {...}`
# fails to compile), so each test replaces input keys one by one (`with input.tool as tool`), and
# with a local variable: `with input.tool as some_rule` is silently ignored by rego-cpp 1.5.
package colonnade.policy_test

import rego.v1

destructive := {"name": "acme:billing:void_invoice", "side_effects": "destructive", "requires_human_approval": false}

flagged := {"name": "acme:billing:send_invoice", "side_effects": "write", "requires_human_approval": true}

read := {"name": "acme:billing:get_invoice", "side_effects": "read", "requires_human_approval": false}

test_a_destructive_tool_needs_approval if {
	destructive_ := destructive
	data.colonnade.decision.require_approval == {"acme:billing:void_invoice is destructive: a human must approve each call"} with input.tool as destructive_
}

test_a_tool_flagged_by_its_contract_needs_approval if {
	flagged_ := flagged
	count(data.colonnade.decision.require_approval) == 1 with input.tool as flagged_
}

test_a_read_needs_no_approval if {
	read_ := read
	count(data.colonnade.decision.require_approval) == 0 with input.tool as read_
}

test_approval_never_denies if {
	destructive_ := destructive
	count(data.colonnade.decision.deny) == 0 with input.tool as destructive_
}
